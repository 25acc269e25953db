/* q42_facts_vol.c -- facts from a Q42 volume (q42-volume(5)).
 *
 * Grounding may use what a volume has committed: the quin entries and the
 * N-Quads of binding entries, never pending (unreviewed) frames. The
 * volume is read through the wal's indexed reader, one entry at a time,
 * each checked against its frame, and never blocks a writer. Kept apart from q42_facts.c so
 * the fact set itself does not depend on lib/wal.
 */
#include "governance/q42_facts.h"

#include "common/q42_buf.h"
#include "wal/q42_volume.h"
#include "wal/q42_wal.h"

int q42_facts_load_volume(q42_facts *f, const char *path, q42_err *err)
{
	q42_wal_reader r;
	q42_buf text;
	int rc;
	if ((rc = q42_wal_reader_open(&r, path, err)) != Q42_OK)
		return rc;
	q42_buf_init(&text);
	for (uint64_t i = 0; i < r.n_leaves; i++) {
		q42_vol_entry e;
		uint64_t seq, skip = 0;
		q42_hash leaf;
		if ((rc = q42_wal_reader_entry(&r, i, &e, &seq, leaf, err)) != Q42_OK)
			goto done;
		if (e.kind == Q42_VOL_K_BINDING)
			skip = Q42_VOL_BINDING_HEAD;
		else if (e.kind != Q42_VOL_K_QUIN)
			continue;
		if (e.body_len < skip)
			continue;
		if (!q42_buf_append(&text, e.body + skip, (size_t)(e.body_len - skip)) || !q42_buf_u8(&text, '\n')) {
			rc = q42_err_set(err, Q42_ENOMEM, "%s: out of memory collecting facts", path);
			goto done;
		}
	}
	rc = q42_facts_add(f, text.data, text.len, path, err);
done:
	q42_buf_free(&text);
	q42_wal_reader_close(&r);
	return rc;
}
