/* fuzz_record.c -- libFuzzer harness for q42grd's record path.
 *
 * Runs one input line through every gate under a fixed policy that turns
 * each gate on (intents with scopes, namespaces, shapes, grounding, egress
 * patterns) and fixed facts; the first byte picks the caller's options.
 * The output line must be exactly one line of JSON.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "governance/q42_grd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char policy_json[] =
	"{\"schema\":\"q42-policy/1\",\"default_intent\":\"story\","
	"\"intents\":{\"story\":{\"max_generated_tokens\":8},"
	"\"kb\":{\"grounding\":true,\"structured\":true,\"shape\":\"s\",\"namespaces\":[\"http://ex.org/\"],"
	"\"scopes\":[\"http://ex.org/\"],\"max_prompt_tokens\":4}},"
	"\"shapes\":{\"s\":{\"closed\":true,\"properties\":["
	"{\"predicate\":\"http://ex.org/name\",\"object\":\"literal\",\"languages\":[\"en\"],\"pattern\":\"^[A-Z]\","
	"\"min_count\":1,\"max_count\":2,\"max_length\":12},"
	"{\"predicate\":\"http://ex.org/knows\",\"object\":\"iri\",\"object_namespace\":\"http://ex.org/\"}]}},"
	"\"egress\":{\"patterns\":[{\"name\":\"k\",\"regex\":\"AKIA[0-9A-Z]{4}\"},"
	"{\"name\":\"m\",\"regex\":\"[a-z]+@[a-z]+\",\"ignore_case\":true,\"targets\":[\"prompt\"]}]},"
	"\"grounding\":{\"threshold\":0.9,\"review_threshold\":0.4}}";
static const char facts_nq[] = "<http://ex.org/a> <http://ex.org/name> \"Al\"@en .\n"
			       "<http://ex.org/a> <http://ex.org/knows> <http://ex.org/b> <http://ex.org/g> .\n";

static q42_policy policy;
static q42_facts facts;
static bool ready;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	q42_grd_config cfg = {0};
	q42_verdict v;
	q42_buf out;
	q42_err err;
	if (!ready) {
		if (q42_policy_parse(&policy, policy_json, strlen(policy_json), "fuzz", &err) != Q42_OK)
			abort();
		q42_facts_init(&facts);
		if (q42_facts_add(&facts, facts_nq, strlen(facts_nq), "fuzz", &err) != Q42_OK)
			abort();
		ready = true;
	}
	if (size == 0)
		return 0;
	cfg.policy = &policy;
	cfg.facts = (data[0] & 1) ? &facts : NULL;
	cfg.review = (data[0] & 2) != 0;
	cfg.intent = (data[0] & 4) ? "kb" : NULL;
	cfg.scope = (data[0] & 8) ? "http://ex.org/x" : NULL;
	cfg.prompt = (data[0] & 16) ? "Once upon a time" : NULL;
	cfg.prompt_len = cfg.prompt ? strlen(cfg.prompt) : 0;
	cfg.sysfs_root = "/nonexistent-q42-fuzz";
	cfg.program = "q42grd";
	cfg.version = "fuzz";
	q42_verdict_init(&v);
	q42_buf_init(&out);
	if (q42_grd_check(&cfg, data + 1, size - 1, 1, &v, &out, &err) == Q42_OK) {
		json_error_t je;
		json_t *o;
		if (out.len == 0 || out.data[out.len - 1] != '\n' || memchr(out.data, '\n', out.len - 1))
			abort();
		o = json_loadb((const char *)out.data, out.len, 0, &je);
		if (!o || !json_is_object(json_object_get(o, "verdict")))
			abort();
		json_decref(o);
	}
	q42_verdict_free(&v);
	q42_buf_free(&out);
	return 0;
}
