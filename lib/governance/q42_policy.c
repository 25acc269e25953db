/* q42_policy.c -- load and validate a q42-policy/1 file (jansson, regcomp).
 *
 * Every key, type and range of q42-policy(5) is checked here, once, and an
 * unknown key is an error: a misspelt limit in a security policy must not
 * silently mean "no limit". Messages name the file and the JSON path.
 * The parsed policy owns copies of every string and the compiled regular
 * expressions; it keeps nothing of the JSON document.
 */
#include "governance/q42_policy.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/q42_file.h"
#include "formats/q42_digest.h"

struct ctx {
	const char *name;
	q42_err *err;
};

static int bad(struct ctx *c, const char *path, const char *what)
{
	return q42_err_set(c->err, Q42_EFORMAT, "%s: %s: %s", c->name, path, what);
}

static int nomem(struct ctx *c)
{
	return q42_err_set(c->err, Q42_ENOMEM, "%s: out of memory", c->name);
}

/* Refuse keys outside the list (NULL-terminated). */
static int check_keys(struct ctx *c, const char *path, json_t *obj, const char *const *keys)
{
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v) {
		bool known = false;
		for (size_t i = 0; keys[i]; i++)
			if (strcmp(k, keys[i]) == 0)
				known = true;
		if (!known) {
			char what[256];
			snprintf(what, sizeof(what), "unknown key \"%.64s\"", k);
			return bad(c, path, what);
		}
	}
	if (json_object_size(obj) > Q42_POLICY_MAX_ITEMS)
		return bad(c, path, "too many keys");
	return Q42_OK;
}

static int get_string(struct ctx *c, const char *path, json_t *v, char **out)
{
	if (!json_is_string(v))
		return bad(c, path, "expected a string");
	if (strlen(json_string_value(v)) != json_string_length(v))
		return bad(c, path, "string contains U+0000");
	*out = strdup(json_string_value(v));
	return *out ? Q42_OK : nomem(c);
}

static int get_bool(struct ctx *c, const char *path, json_t *v, bool *out)
{
	if (!json_is_boolean(v))
		return bad(c, path, "expected true or false");
	*out = json_is_true(v);
	return Q42_OK;
}

static int get_count(struct ctx *c, const char *path, json_t *v, uint64_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return bad(c, path, "expected a non-negative integer");
	*out = (uint64_t)json_integer_value(v);
	return Q42_OK;
}

static int get_number(struct ctx *c, const char *path, json_t *v, double lo, double hi, double *out)
{
	if (!json_is_number(v))
		return bad(c, path, "expected a number");
	double d = json_number_value(v);
	if (!isfinite(d) || d < lo || d > hi) {
		char what[128];
		snprintf(what, sizeof(what), "%g is outside [%g, %g]", d, lo, hi);
		return bad(c, path, what);
	}
	*out = d;
	return Q42_OK;
}

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* A non-empty array of non-empty strings. */
static int get_strings(struct ctx *c, const char *path, json_t *v, char ***out, size_t *n_out)
{
	size_t n, i;
	json_t *e;
	char **arr;
	if (!json_is_array(v) || json_array_size(v) == 0)
		return bad(c, path, "expected a non-empty array of strings");
	n = json_array_size(v);
	if (n > Q42_POLICY_MAX_ITEMS)
		return bad(c, path, "too many entries");
	arr = calloc(n, sizeof(*arr));
	if (!arr)
		return nomem(c);
	json_array_foreach(v, i, e) {
		int rc = get_string(c, path, e, &arr[i]);
		if (rc == Q42_OK && arr[i][0] == '\0')
			rc = bad(c, path, "empty string");
		if (rc != Q42_OK) {
			free_strings(arr, n);
			return rc;
		}
	}
	*out = arr;
	*n_out = n;
	return Q42_OK;
}

/* Rough size of the tree glibc's regcomp builds: it copies a repeated
 * atom once per repetition (a{16} is 16 copies, (x{10}){10} is 100), so
 * nested or stacked bounds grow it multiplicatively and a short pattern
 * can exhaust memory. Each atom weighs 1, a quantifier multiplies the
 * atom before it (by the upper bound, or 2 for * + ?), a group weighs
 * its contents. Returns a value above the cap for anything too costly,
 * and -1 for stacked quantifiers (a+*, a??+): POSIX leaves them
 * undefined, and glibc takes seconds per few of them to compile. */
static double regex_cost(const char *s)
{
	double sum[Q42_POLICY_MAX_RE_DEPTH + 1], last[Q42_POLICY_MAX_RE_DEPTH + 1];
	int d = 0;
	bool quant = false; /* the previous token was a quantifier */
	const double huge = Q42_POLICY_MAX_RE_COST * 2;
	sum[0] = last[0] = 0;
	for (size_t i = 0; s[i]; i++) {
		double f = 0;
		bool was_quant = quant;
		quant = false;
		switch (s[i]) {
		case '\\':
			if (s[i + 1])
				i++;
			sum[d] += last[d];
			last[d] = 1;
			break;
		case '[':
			i++;
			if (s[i] == '^')
				i++;
			if (s[i] == ']')
				i++;
			while (s[i] && s[i] != ']') {
				if (s[i] == '[' && (s[i + 1] == ':' || s[i + 1] == '.' || s[i + 1] == '=')) {
					char k = s[i + 1];
					const char *end = s + i + 2;
					while (*end && !(end[0] == k && end[1] == ']'))
						end++;
					if (!*end)
						return 0; /* unterminated: regcomp refuses it */
					i = (size_t)(end - s) + 1;
				}
				i++;
			}
			if (!s[i])
				return 0; /* unterminated: regcomp refuses it */
			sum[d] += last[d];
			last[d] = 1;
			break;
		case '(':
			if (d == Q42_POLICY_MAX_RE_DEPTH)
				return huge;
			d++;
			sum[d] = last[d] = 0;
			break;
		case ')':
			if (d == 0) {
				sum[d] += last[d];
				last[d] = 1;
				break;
			}
			f = sum[d] + last[d] + 1;
			d--;
			sum[d] += last[d];
			last[d] = f;
			break;
		case '|':
			sum[d] += last[d];
			last[d] = 0;
			break;
		case '*':
		case '+':
		case '?':
			if (was_quant)
				return -1;
			last[d] *= 2;
			quant = true;
			break;
		case '{': {
			/* {m}, {m,}, {m,n} and GNU's {,n}; anything else is a literal '{'. */
			unsigned long lo = 0, hi;
			bool digits = false;
			char *end = (char *)s + i + 1;
			if (*end >= '0' && *end <= '9') {
				lo = strtoul(end, &end, 10);
				digits = true;
			}
			hi = lo;
			if (*end == ',') {
				end++;
				if (*end >= '0' && *end <= '9') {
					hi = strtoul(end, &end, 10);
					digits = true;
				} else {
					hi = lo + 1;
				}
			}
			if (!digits || *end != '}') {
				sum[d] += last[d];
				last[d] = 1;
				break;
			}
			if (was_quant)
				return -1;
			if (lo > 100000 || hi > 100000)
				return huge;
			last[d] *= (double)(hi > lo ? hi : lo) + 1;
			i = (size_t)(end - s);
			quant = true;
			break;
		}
		default:
			sum[d] += last[d];
			last[d] = 1;
		}
		if (sum[d] + last[d] > Q42_POLICY_MAX_RE_COST)
			return huge;
	}
	double total = 0;
	for (int k = 0; k <= d; k++)
		total += sum[k] + last[k];
	return total;
}

static int compile_re(struct ctx *c, const char *path, const char *src, bool icase, regex_t *re)
{
	int e;
	if (strlen(src) > Q42_POLICY_MAX_PATTERN)
		return bad(c, path, "regular expression too long");
	double cost = regex_cost(src);
	if (cost < 0)
		return bad(c, path, "stacked quantifiers (such as a+* or a?+) are undefined in POSIX EREs");
	if (cost > Q42_POLICY_MAX_RE_COST)
		return bad(c, path, "regular expression too costly (nested repetition bounds)");
	e = regcomp(re, src, REG_EXTENDED | REG_NOSUB | (icase ? REG_ICASE : 0));
	if (e != 0) {
		char msg[160], what[256];
		regerror(e, re, msg, sizeof(msg));
		snprintf(what, sizeof(what), "regular expression does not compile: %s", msg);
		return bad(c, path, what);
	}
	return Q42_OK;
}

static int get_kinds(struct ctx *c, const char *path, json_t *v, unsigned *out)
{
	static const struct {
		const char *name;
		unsigned kinds;
	} names[] = {
		{"iri", Q42_KINDS_IRI},
		{"blank", Q42_KINDS_BLANK},
		{"literal", Q42_KINDS_LITERAL},
		{"node", Q42_KINDS_IRI | Q42_KINDS_BLANK},
		{"any", Q42_KINDS_ANY},
	};
	const char *s = json_string_value(v);
	if (s)
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (strcmp(s, names[i].name) == 0) {
				*out = names[i].kinds;
				return Q42_OK;
			}
	return bad(c, path, "expected \"iri\", \"blank\", \"literal\", \"node\" or \"any\"");
}

static void prop_free(q42_shape_prop *sp)
{
	free(sp->predicate);
	free(sp->datatype);
	free_strings(sp->languages, sp->n_languages);
	free(sp->object_namespace);
	if (sp->pattern_src)
		regfree(&sp->pattern);
	free(sp->pattern_src);
}

static void shape_free(q42_shape *s)
{
	for (size_t i = 0; i < s->n_props; i++)
		prop_free(&s->props[i]);
	free(s->props);
	free(s->name);
}

static int parse_prop(struct ctx *c, const char *path, json_t *o, q42_shape_prop *sp)
{
	static const char *const keys[] = {"predicate", "subject", "object", "datatype", "languages",
					   "object_namespace", "pattern", "min_count", "max_count",
					   "max_length", NULL};
	char sub[400];
	json_t *v;
	int rc;
	memset(sp, 0, sizeof(*sp));
	sp->subject_kinds = Q42_KINDS_IRI | Q42_KINDS_BLANK;
	sp->object_kinds = Q42_KINDS_ANY;
	sp->max_count = UINT64_MAX;
	sp->max_length = UINT64_MAX;
	if (!json_is_object(o))
		return bad(c, path, "expected an object");
	if ((rc = check_keys(c, path, o, keys)) != Q42_OK)
		return rc;
#define SUB(k) (snprintf(sub, sizeof(sub), "%s.%s", path, k), sub)
	if (!(v = json_object_get(o, "predicate")))
		return bad(c, path, "missing key \"predicate\"");
	if ((rc = get_string(c, SUB("predicate"), v, &sp->predicate)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "subject")) &&
	    (rc = get_kinds(c, SUB("subject"), v, &sp->subject_kinds)) != Q42_OK)
		return rc;
	if (sp->subject_kinds & Q42_KINDS_LITERAL)
		return bad(c, SUB("subject"), "a subject cannot be a literal");
	if ((v = json_object_get(o, "object")) &&
	    (rc = get_kinds(c, SUB("object"), v, &sp->object_kinds)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "datatype"))) {
		if ((rc = get_string(c, SUB("datatype"), v, &sp->datatype)) != Q42_OK)
			return rc;
		if (strcmp(sp->datatype, Q42_XSD_STRING) == 0) {
			/* Stored without a datatype (see q42_quin.h), so match that. */
			free(sp->datatype);
			sp->datatype = NULL;
		}
	}
	if ((v = json_object_get(o, "languages")) &&
	    (rc = get_strings(c, SUB("languages"), v, &sp->languages, &sp->n_languages)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "object_namespace")) &&
	    (rc = get_string(c, SUB("object_namespace"), v, &sp->object_namespace)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "pattern"))) {
		char *src = NULL;
		if ((rc = get_string(c, SUB("pattern"), v, &src)) != Q42_OK)
			return rc;
		if ((rc = compile_re(c, sub, src, false, &sp->pattern)) != Q42_OK) {
			free(src);
			return rc;
		}
		sp->pattern_src = src;
	}
	if ((v = json_object_get(o, "min_count")) &&
	    (rc = get_count(c, SUB("min_count"), v, &sp->min_count)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "max_count")) &&
	    (rc = get_count(c, SUB("max_count"), v, &sp->max_count)) != Q42_OK)
		return rc;
	if (sp->min_count > sp->max_count)
		return bad(c, path, "min_count is greater than max_count");
	if ((v = json_object_get(o, "max_length")) &&
	    (rc = get_count(c, SUB("max_length"), v, &sp->max_length)) != Q42_OK)
		return rc;
#undef SUB
	return Q42_OK;
}

static int parse_shape(struct ctx *c, const char *name, json_t *o, q42_shape *s)
{
	static const char *const keys[] = {"closed", "properties", NULL};
	char path[320];
	json_t *v, *e;
	size_t i;
	int rc;
	snprintf(path, sizeof(path), "shapes.%.200s", name);
	if (!(s->name = strdup(name)))
		return nomem(c);
	if (!json_is_object(o))
		return bad(c, path, "expected an object");
	if ((rc = check_keys(c, path, o, keys)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "closed")) && (rc = get_bool(c, path, v, &s->closed)) != Q42_OK)
		return rc;
	v = json_object_get(o, "properties");
	if (!json_is_array(v))
		return bad(c, path, "\"properties\" must be an array");
	if (json_array_size(v) > Q42_POLICY_MAX_ITEMS)
		return bad(c, path, "too many properties");
	s->props = calloc(json_array_size(v) + 1, sizeof(*s->props));
	if (!s->props)
		return nomem(c);
	json_array_foreach(v, i, e) {
		char ppath[360];
		snprintf(ppath, sizeof(ppath), "%s.properties[%zu]", path, i);
		rc = parse_prop(c, ppath, e, &s->props[i]);
		s->n_props = i + 1;
		if (rc != Q42_OK)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->props[j].predicate, s->props[i].predicate) == 0)
				return bad(c, ppath, "predicate constrained twice in one shape");
	}
	return Q42_OK;
}

static void intent_free(q42_intent *in)
{
	free(in->name);
	free_strings(in->scopes, in->n_scopes);
	free_strings(in->namespaces, in->n_namespaces);
	free_strings(in->decision_models, in->n_decision_models);
}

static int parse_intent(struct ctx *c, q42_policy *p, const char *name, json_t *o, q42_intent *in)
{
	static const char *const keys[] = {"description", "scopes", "namespaces", "max_prompt_tokens",
					   "max_generated_tokens", "grounding", "structured", "critical",
					   "allow_replacement", "shape", "decision", "decision_models", NULL};
	char path[320], sub[360];
	json_t *v;
	int rc;
	snprintf(path, sizeof(path), "intents.%.200s", name);
	in->max_prompt_tokens = UINT64_MAX;
	in->max_generated_tokens = UINT64_MAX;
	if (!(in->name = strdup(name)))
		return nomem(c);
	if (name[0] == '\0')
		return bad(c, "intents", "empty intent name");
	if (!json_is_object(o))
		return bad(c, path, "expected an object");
	if ((rc = check_keys(c, path, o, keys)) != Q42_OK)
		return rc;
#define SUB(k) (snprintf(sub, sizeof(sub), "%s.%s", path, k), sub)
	if ((v = json_object_get(o, "description")) && !json_is_string(v))
		return bad(c, SUB("description"), "expected a string");
	if ((v = json_object_get(o, "scopes")) &&
	    (rc = get_strings(c, SUB("scopes"), v, &in->scopes, &in->n_scopes)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "namespaces")) &&
	    (rc = get_strings(c, SUB("namespaces"), v, &in->namespaces, &in->n_namespaces)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "max_prompt_tokens")) &&
	    (rc = get_count(c, SUB("max_prompt_tokens"), v, &in->max_prompt_tokens)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "max_generated_tokens")) &&
	    (rc = get_count(c, SUB("max_generated_tokens"), v, &in->max_generated_tokens)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "grounding")) && (rc = get_bool(c, SUB("grounding"), v, &in->grounding)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "structured")) &&
	    (rc = get_bool(c, SUB("structured"), v, &in->structured)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "critical")) && (rc = get_bool(c, SUB("critical"), v, &in->critical)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "allow_replacement")) &&
	    (rc = get_bool(c, SUB("allow_replacement"), v, &in->allow_replacement)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "decision")) && (rc = get_bool(c, SUB("decision"), v, &in->decision)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "decision_models"))) {
		if ((rc = get_strings(c, SUB("decision_models"), v, &in->decision_models,
				      &in->n_decision_models)) != Q42_OK)
			return rc;
		for (size_t i = 0; i < in->n_decision_models; i++) {
			const char *h = in->decision_models[i];
			if (strlen(h) != 64 || strspn(h, "0123456789abcdef") != 64)
				return bad(c, SUB("decision_models"),
					   "expected SHA-256 digests, 64 lower-case hex digits");
		}
		if (!in->decision)
			return bad(c, SUB("decision_models"), "needs \"decision\": true");
	}
	if ((v = json_object_get(o, "shape"))) {
		const char *sn = json_string_value(v);
		if (!sn)
			return bad(c, SUB("shape"), "expected a string");
		for (size_t i = 0; i < p->n_shapes; i++)
			if (strcmp(p->shapes[i].name, sn) == 0)
				in->shape = &p->shapes[i];
		if (!in->shape)
			return bad(c, SUB("shape"), "names no shape under \"shapes\"");
	}
#undef SUB
	return Q42_OK;
}

static int parse_egress(struct ctx *c, q42_policy *p, json_t *o)
{
	static const char *const keys[] = {"require_prompt", "patterns", NULL};
	static const char *const pkeys[] = {"name", "regex", "ignore_case", "targets", NULL};
	json_t *v, *e;
	size_t i;
	int rc;
	if (!json_is_object(o))
		return bad(c, "egress", "expected an object");
	if ((rc = check_keys(c, "egress", o, keys)) != Q42_OK)
		return rc;
	if ((v = json_object_get(o, "require_prompt")) &&
	    (rc = get_bool(c, "egress.require_prompt", v, &p->egress_require_prompt)) != Q42_OK)
		return rc;
	if (!(v = json_object_get(o, "patterns")))
		return Q42_OK;
	if (!json_is_array(v) || json_array_size(v) > Q42_POLICY_MAX_ITEMS)
		return bad(c, "egress.patterns", "expected an array (at most 4096 entries)");
	p->egress = calloc(json_array_size(v) + 1, sizeof(*p->egress));
	if (!p->egress)
		return nomem(c);
	json_array_foreach(v, i, e) {
		q42_egress *eg = &p->egress[i];
		char path[64], sub[96];
		json_t *f;
		bool icase = false;
		p->n_egress = i + 1;
		snprintf(path, sizeof(path), "egress.patterns[%zu]", i);
		eg->targets = Q42_EGRESS_PROMPT | Q42_EGRESS_TEXT;
		if (!json_is_object(e))
			return bad(c, path, "expected an object");
		if ((rc = check_keys(c, path, e, pkeys)) != Q42_OK)
			return rc;
		snprintf(sub, sizeof(sub), "%s.name", path);
		if ((rc = get_string(c, sub, json_object_get(e, "name"), &eg->name)) != Q42_OK)
			return rc;
		snprintf(sub, sizeof(sub), "%s.ignore_case", path);
		if ((f = json_object_get(e, "ignore_case")) && (rc = get_bool(c, sub, f, &icase)) != Q42_OK)
			return rc;
		if ((f = json_object_get(e, "targets"))) {
			char **t = NULL;
			size_t nt = 0;
			snprintf(sub, sizeof(sub), "%s.targets", path);
			if ((rc = get_strings(c, sub, f, &t, &nt)) != Q42_OK)
				return rc;
			eg->targets = 0;
			for (size_t j = 0; j < nt; j++) {
				if (strcmp(t[j], "prompt") == 0)
					eg->targets |= Q42_EGRESS_PROMPT;
				else if (strcmp(t[j], "text") == 0)
					eg->targets |= Q42_EGRESS_TEXT;
				else
					rc = bad(c, sub, "targets are \"prompt\" and \"text\"");
			}
			free_strings(t, nt);
			if (rc != Q42_OK)
				return rc;
		}
		snprintf(sub, sizeof(sub), "%s.regex", path);
		char *src = NULL;
		if ((rc = get_string(c, sub, json_object_get(e, "regex"), &src)) != Q42_OK)
			return rc;
		if ((rc = compile_re(c, sub, src, icase, &eg->re)) != Q42_OK) {
			free(src);
			return rc;
		}
		eg->pattern_src = src;
	}
	return Q42_OK;
}

void q42_policy_free(q42_policy *p)
{
	if (!p)
		return;
	free(p->default_intent);
	for (size_t i = 0; i < p->n_intents; i++)
		intent_free(&p->intents[i]);
	free(p->intents);
	for (size_t i = 0; i < p->n_shapes; i++)
		shape_free(&p->shapes[i]);
	free(p->shapes);
	for (size_t i = 0; i < p->n_egress; i++) {
		free(p->egress[i].name);
		if (p->egress[i].pattern_src)
			regfree(&p->egress[i].re);
		free(p->egress[i].pattern_src);
	}
	free(p->egress);
	memset(p, 0, sizeof(*p));
}

static int parse_root(struct ctx *c, q42_policy *p, json_t *root)
{
	static const char *const keys[] = {"schema", "default_intent", "intents", "shapes", "egress",
					   "grounding", "thermal", NULL};
	json_t *v, *e;
	const char *k;
	int rc;
	if (!json_is_object(root))
		return bad(c, "(top)", "expected a JSON object");
	if ((rc = check_keys(c, "(top)", root, keys)) != Q42_OK)
		return rc;
	v = json_object_get(root, "schema");
	if (!json_is_string(v) || strcmp(json_string_value(v), Q42_POLICY_SCHEMA) != 0)
		return bad(c, "schema", "expected \"" Q42_POLICY_SCHEMA "\"");
	if ((v = json_object_get(root, "shapes"))) {
		if (!json_is_object(v))
			return bad(c, "shapes", "expected an object");
		if (json_object_size(v) > Q42_POLICY_MAX_ITEMS)
			return bad(c, "shapes", "too many shapes");
		p->shapes = calloc(json_object_size(v) + 1, sizeof(*p->shapes));
		if (!p->shapes)
			return nomem(c);
		json_object_foreach(v, k, e) {
			rc = parse_shape(c, k, e, &p->shapes[p->n_shapes]);
			p->n_shapes++;
			if (rc != Q42_OK)
				return rc;
		}
	}
	v = json_object_get(root, "intents");
	if (!json_is_object(v) || json_object_size(v) == 0)
		return bad(c, "intents", "expected a non-empty object");
	if (json_object_size(v) > Q42_POLICY_MAX_ITEMS)
		return bad(c, "intents", "too many intents");
	p->intents = calloc(json_object_size(v), sizeof(*p->intents));
	if (!p->intents)
		return nomem(c);
	json_object_foreach(v, k, e) {
		rc = parse_intent(c, p, k, e, &p->intents[p->n_intents]);
		p->n_intents++;
		if (rc != Q42_OK)
			return rc;
	}
	if ((v = json_object_get(root, "default_intent"))) {
		if ((rc = get_string(c, "default_intent", v, &p->default_intent)) != Q42_OK)
			return rc;
		if (!q42_policy_intent(p, p->default_intent))
			return bad(c, "default_intent", "names no intent under \"intents\"");
	}
	if ((v = json_object_get(root, "egress")) && (rc = parse_egress(c, p, v)) != Q42_OK)
		return rc;
	p->grounding_threshold = 1.0;
	p->review_threshold = 1.0;
	if ((v = json_object_get(root, "grounding"))) {
		static const char *const gkeys[] = {"threshold", "review_threshold", NULL};
		if (!json_is_object(v))
			return bad(c, "grounding", "expected an object");
		if ((rc = check_keys(c, "grounding", v, gkeys)) != Q42_OK)
			return rc;
		if ((e = json_object_get(v, "threshold")) &&
		    (rc = get_number(c, "grounding.threshold", e, 0.0, 1.0, &p->grounding_threshold)) != Q42_OK)
			return rc;
		p->review_threshold = p->grounding_threshold;
		if ((e = json_object_get(v, "review_threshold")) &&
		    (rc = get_number(c, "grounding.review_threshold", e, 0.0, p->grounding_threshold,
				     &p->review_threshold)) != Q42_OK)
			return rc;
	}
	if ((v = json_object_get(root, "thermal"))) {
		static const char *const tkeys[] = {"limit_c", "trip_points", NULL};
		if (!json_is_object(v))
			return bad(c, "thermal", "expected an object");
		if ((rc = check_keys(c, "thermal", v, tkeys)) != Q42_OK)
			return rc;
		p->thermal = true;
		p->thermal_trip_points = true;
		if ((e = json_object_get(v, "limit_c")) &&
		    (rc = get_number(c, "thermal.limit_c", e, 1.0, 500.0, &p->thermal_limit_c)) != Q42_OK)
			return rc;
		if ((e = json_object_get(v, "trip_points")) &&
		    (rc = get_bool(c, "thermal.trip_points", e, &p->thermal_trip_points)) != Q42_OK)
			return rc;
		if (p->thermal_limit_c == 0 && !p->thermal_trip_points)
			return bad(c, "thermal", "neither limit_c nor trip_points: the gate could never fire");
	}
	return Q42_OK;
}

int q42_policy_parse(q42_policy *p, const void *data, size_t n, const char *name, q42_err *err)
{
	struct ctx c = {name ? name : "policy", err};
	json_error_t je;
	json_t *root;
	uint8_t digest[Q42_SHA256_LEN];
	int rc;
	memset(p, 0, sizeof(*p));
	if (n > Q42_POLICY_MAX_BYTES)
		return q42_err_set(err, Q42_EFORMAT, "%s: larger than %u bytes", c.name, Q42_POLICY_MAX_BYTES);
	root = json_loadb(data ? data : "", n, JSON_REJECT_DUPLICATES, &je);
	if (!root)
		return q42_err_set(err, Q42_EFORMAT, "%s: line %d, column %d: %s", c.name, je.line,
				   je.column, je.text);
	rc = parse_root(&c, p, root);
	json_decref(root);
	if (rc == Q42_OK && (rc = q42_sha256(data ? data : "", n, digest, err)) == Q42_OK)
		q42_hex_encode(digest, Q42_SHA256_LEN, p->sha256);
	if (rc != Q42_OK)
		q42_policy_free(p);
	return rc;
}

int q42_policy_load(q42_policy *p, const char *path, q42_err *err)
{
	q42_map m;
	int rc;
	memset(p, 0, sizeof(*p));
	if ((rc = q42_map_open(&m, path, 0, err)) != Q42_OK)
		return rc;
	if (m.size > Q42_POLICY_MAX_BYTES)
		rc = q42_err_set(err, Q42_EFORMAT, "%s: larger than %u bytes", path, Q42_POLICY_MAX_BYTES);
	else
		rc = q42_policy_parse(p, m.data, (size_t)m.size, path, err);
	q42_map_close(&m);
	return rc;
}

const q42_intent *q42_policy_intent(const q42_policy *p, const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < p->n_intents; i++)
		if (strcmp(p->intents[i].name, name) == 0)
			return &p->intents[i];
	return NULL;
}
