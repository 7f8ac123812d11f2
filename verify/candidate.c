/* candidate.c - a model's answer -> one register per value, strictly. */
#include "verify/verify.h"
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void rs_candidate_free(rs_candidate *c) {
  free(c->reg);
  free(c->beyond);
  memset(c, 0, sizeof *c);
}

const char *rs_candidate_reg_str(const rs_target *t, const rs_candidate *c, uint32_t v, char *buf, size_t n) {
  rs_preg r = c->reg[v];
  if (r.unit != RS_UNIT_BEYOND || !c->beyond) return t->format_preg(t, r, buf, n);
  const rs_regfile *f = &t->files[c->beyond[v].file];
  const char *pre = f->asm_prefix ? f->asm_prefix : f->name;
  unsigned lo = c->beyond[v].index, w = rs_lanes_units(r.lanes);
  if (w <= 1) snprintf(buf, n, "%s%u", pre, lo);
  else snprintf(buf, n, "%s[%u:%u]", pre, lo, lo + w - 1);
  return buf;
}

/* Decimal register number below RS_BEYOND_MAX at s: characters read, 0 if none or too large. */
static size_t reg_num(const char *s, const char *e, uint32_t *out) {
  size_t i = 0;
  uint32_t v = 0;
  while (s + i < e && s[i] >= '0' && s[i] <= '9') {
    v = v * 10 + (uint32_t)(s[i] - '0');
    if (v >= RS_BEYOND_MAX) return 0;
    i++;
  }
  if (i) *out = v;
  return i;
}

/* Does the target read "<pre><probe>" (an in-range register in the same spelling) as the first
 * register of file f? The target's own parser decides which prefixes name which file. */
static bool spells_file(const rs_target *t, const char *pre, size_t plen, const char *probe, uint32_t f) {
  char buf[48];
  size_t ql = strlen(probe);
  if (plen + ql >= sizeof buf) return false;
  memcpy(buf, pre, plen);
  memcpy(buf + plen, probe, ql + 1);
  rs_preg r;
  return !t->parse_preg(t, buf, plen + ql, &r) && r.unit == t->files[f].first;
}

/* A well-formed name of a register past the end of its file (the target's parser refused it):
 * PREFIX N, PREFIX[LO:HI] or the MIR tuple PREFIX N_PREFIX N+1..., where PREFIX spells a file
 * of the target and the register runs past that file's end. 0 on success. */
static int parse_beyond(const rs_target *t, const char *s, size_t n, rs_beyond *out, rs_lanes *lanes) {
  const char *e = s + n, *p = s;
  if (p < e && *p == '$') p++; /* MIR: "$vgpr300", once before a whole tuple */
  const char *kind = p;
  while (p < e && ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z'))) p++;
  size_t plen = (size_t)(p - s), klen = (size_t)(p - kind);
  if (klen == 0 || klen > 16) return -1;
  uint32_t lo, hi;
  size_t k;
  char probe[48];
  if (p < e && *p == '[') { /* PREFIX[LO:HI] */
    p++;
    if (!(k = reg_num(p, e, &lo)) || (p += k) >= e || *p++ != ':' || !(k = reg_num(p, e, &hi)) ||
        (p += k) + 1 != e || *p != ']')
      return -1;
    snprintf(probe, sizeof probe, "[0:0]");
  } else {
    if (!(k = reg_num(p, e, &lo))) return -1;
    p += k;
    hi = lo;
    while (p < e && *p == '_') { /* MIR tuple: the same kind, consecutive numbers */
      uint32_t nx;
      if ((size_t)(e - p - 1) < klen || memcmp(p + 1, kind, klen) || !(k = reg_num(p + 1 + klen, e, &nx)) ||
          nx != hi + 1)
        return -1;
      hi = nx;
      p += 1 + klen + k;
    }
    if (p != e) return -1;
    if (hi == lo) snprintf(probe, sizeof probe, "0");
    else snprintf(probe, sizeof probe, "0_%.*s1", (int)klen, kind); /* the target must spell tuples so */
  }
  if (hi < lo || hi - lo >= 32) return -1; /* no register of any target is wider */
  for (uint32_t f = 0; f < t->nfiles; f++) {
    if (hi < t->files[f].count || !spells_file(t, s, plen, probe, f)) continue;
    out->file = f;
    out->index = lo;
    *lanes = rs_lanes_full(hi - lo + 1);
    return 0;
  }
  return -1;
}

/* End of the JSON value starting at s[0] == '{' (string-aware brace matching), or NULL.
 * Also reports the maximum nesting depth. */
static const char *match_brace(const char *s, const char *end, int *depth_max) {
  int depth = 0;
  bool str = false;
  *depth_max = 0;
  for (const char *c = s; c < end; c++) {
    if (str) {
      if (*c == '\\') c++;
      else if (*c == '"') str = false;
      continue;
    }
    if (*c == '"') str = true;
    else if (*c == '{' || *c == '[') {
      if (++depth > *depth_max) *depth_max = depth;
    } else if (*c == '}' || *c == ']') {
      if (--depth == 0) return c + 1;
      if (depth < 0) return NULL;
    }
  }
  return NULL;
}

static bool blank(const char *s, const char *e) {
  for (; s < e; s++)
    if (*s != ' ' && *s != '\t' && *s != '\n' && *s != '\r') return false;
  return true;
}

/* Locate the JSON object: the whole answer, or (counted as wrapped) the first object inside
 * a ```json fence or inside prose. */
static int locate(const char *text, size_t len, const char **js, const char **je, bool *wrapped,
                  rs_check_result *res) {
  const char *s = text, *e = text + len;
  while (s < e && (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')) s++;
  *wrapped = false;
  const char *fence_end = e;
  if (s == e || *s != '{') {
    *wrapped = true;
    const char *f = NULL;
    for (const char *c = s; c + 3 <= e; c++)
      if (!memcmp(c, "```", 3)) {
        f = c;
        break;
      }
    if (f) { /* fenced: content up to the closing fence must be one object */
      const char *c = f + 3;
      while (c < e && *c != '\n') c++;
      const char *close = NULL;
      for (const char *q = c; q + 3 <= e; q++)
        if (!memcmp(q, "```", 3)) {
          close = q;
          break;
        }
      s = c;
      fence_end = close ? close : e;
      while (s < fence_end && *s != '{') {
        if (!blank(s, s + 1)) break;
        s++;
      }
    } else {
      while (s < e && *s != '{') s++;
    }
    if (s >= e || *s != '{') {
      rs_result_add(res, RS_VK_JSON, "no JSON object in the answer");
      return -1;
    }
  }
  int depth;
  const char *end = match_brace(s, fence_end, &depth);
  if (!end) {
    rs_result_add(res, RS_VK_JSON, "unterminated JSON object");
    return -1;
  }
  if (depth > RS_CAND_MAX_DEPTH) {
    rs_result_add(res, RS_VK_JSON, "JSON nested %d deep (limit %d)", depth, RS_CAND_MAX_DEPTH);
    return -1;
  }
  if (!*wrapped && !blank(end, e)) {
    rs_result_add(res, RS_VK_JSON, "trailing text after the JSON object");
    return -1;
  }
  if (*wrapped && fence_end != e && !blank(end, fence_end)) {
    rs_result_add(res, RS_VK_JSON, "trailing text after the JSON object inside the fence");
    return -1;
  }
  *js = s;
  *je = end;
  return 0;
}

/* name -> value index: original names directly, normalized names through the map */
typedef struct {
  const char **key;
  int32_t *val;
  uint32_t cap;
} nmap;

static void nmap_put(nmap *m, const char *k, int32_t v) {
  uint32_t j = (uint32_t)rs_hash_bytes(k, strlen(k), 7) & (m->cap - 1);
  while (m->key[j] && strcmp(m->key[j], k)) j = (j + 1) & (m->cap - 1);
  m->key[j] = k;
  m->val[j] = v;
}
static int32_t nmap_get(const nmap *m, const char *k) {
  uint32_t j = (uint32_t)rs_hash_bytes(k, strlen(k), 7) & (m->cap - 1);
  while (m->key[j]) {
    if (!strcmp(m->key[j], k)) return m->val[j];
    j = (j + 1) & (m->cap - 1);
  }
  return -1;
}

int rs_candidate_parse(const rs_problem *p, const rs_namemap *names, const char *text, size_t len,
                       rs_candidate *c, rs_check_result *res) {
  memset(c, 0, sizeof *c);
  c->n = p->nvars;
  c->reg = rs_xcalloc(p->nvars + 1, sizeof *c->reg);
  if (len > RS_CAND_MAX_BYTES) {
    rs_result_add(res, RS_VK_JSON, "answer of %zu bytes exceeds the %u-byte limit", len, RS_CAND_MAX_BYTES);
    return -1;
  }
  if (memchr(text, 0, len)) {
    rs_result_add(res, RS_VK_JSON, "NUL byte in the answer");
    return -1;
  }
  const char *js, *je;
  if (locate(text, len, &js, &je, &c->wrapped, res)) return -1;
  const char *pend = NULL;
  cJSON *root = cJSON_ParseWithLengthOpts(js, (size_t)(je - js), &pend, 0);
  if (!root || !cJSON_IsObject(root) || pend != je) {
    rs_result_add(res, RS_VK_JSON, "malformed JSON object");
    cJSON_Delete(root);
    return -1;
  }
  nmap m;
  m.cap = 16;
  uint32_t want = 2 * (p->nvars + (names ? names->n : 0)) + 2;
  while (m.cap < want) m.cap *= 2;
  m.key = rs_xcalloc(m.cap, sizeof *m.key);
  m.val = rs_xcalloc(m.cap, sizeof *m.val);
  for (uint32_t v = 0; v < p->nvars; v++) nmap_put(&m, p->vars[v].name, (int32_t)v);
  if (names)
    for (uint32_t i = 0; i < names->n; i++) {
      int32_t v = nmap_get(&m, names->orig[i]);
      if (v >= 0 && nmap_get(&m, names->norm[i]) < 0) nmap_put(&m, names->norm[i], v);
    }
  uint32_t nkeys = 0;
  const cJSON *it;
  cJSON_ArrayForEach(it, root) {
    if (++nkeys > 4 * p->nvars + 64) {
      rs_result_add(res, RS_VK_JSON, "more than %u keys", 4 * p->nvars + 64);
      break;
    }
    const char *k = it->string ? it->string : "";
    int32_t v = nmap_get(&m, k);
    if (v < 0) {
      rs_result_add(res, RS_VK_UNKNOWN, "'%.60s' is not a virtual register of %s", k, p->func);
      continue;
    }
    if (!cJSON_IsString(it)) {
      rs_result_add(res, RS_VK_BADREG, "value of '%.60s' is not a register name", k);
      continue;
    }
    rs_preg r;
    rs_beyond b = {0, 0};
    const char *val = it->valuestring;
    bool past = false;
    if (p->tgt->parse_preg(p->tgt, val, strlen(val), &r)) {
      if (parse_beyond(p->tgt, val, strlen(val), &b, &r.lanes)) {
        rs_result_add(res, RS_VK_BADREG, "'%.40s' (for %.40s) is not a %s register", val, k, p->tgt->name);
        continue;
      }
      r.unit = RS_UNIT_BEYOND; /* judged by the checkers: hardware, not syntax */
      past = true;
    }
    if (c->reg[v].lanes) {
      rs_result_add(res, RS_VK_DUPLICATE, "%s is assigned twice", p->vars[v].name);
      continue;
    }
    c->reg[v] = r;
    if (past) {
      if (!c->beyond) c->beyond = rs_xcalloc(p->nvars + 1, sizeof *c->beyond);
      c->beyond[v] = b;
    }
  }
  for (uint32_t v = 0; v < p->nvars; v++)
    if (!c->reg[v].lanes)
      rs_result_add(res, RS_VK_MISSING, "%s has no register", p->vars[v].name);
  free(m.key);
  free(m.val);
  cJSON_Delete(root);
  return res->verdict == RS_V_SYNTAX ? -1 : 0;
}
