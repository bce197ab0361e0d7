/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The NumPy .npy header (NEP 1, "A simple file format for NumPy arrays", and
 * numpy/lib/format.py): the magic "\x93NUMPY", a version byte pair, the header length
 * (2 bytes little-endian in version 1.0, 4 bytes in 2.0 and 3.0), then a Python dict literal
 *   {'descr': '<f8', 'fortran_order': False, 'shape': (178, 13), }
 * padded with spaces and ended by '\n'. Version 3.0 only differs in allowing UTF-8 in the
 * header, which matters for structured dtypes' field names, not for the dtypes we read.
 *
 * The parser is a small recursive-descent reader of exactly the subset of Python literal
 * syntax that NumPy writes (keys in any order, either quote style, trailing commas, whitespace
 * and line breaks between tokens, Python 2's 'L' suffix on shape integers), and rejects
 * everything else with a message. It is pure (no allocation, no I/O) and never reads past
 * `len`: it is the libFuzzer target, and depends only on status.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "core/internal.h"

#define NPY_MAGIC "\x93NUMPY"
#define NPY_MAGIC_LEN 6
/* Data starts on this boundary in the files we write (NumPy's ARRAY_ALIGN). */
#define NPY_ALIGN 64

/* A format error; the message names the public function the user called (TSR_API_ENTRY). */
#define NPY_FAIL(...) tsr__set_error(TSR_ERR_FORMAT, __func__, __VA_ARGS__)

/* The type strings Tessera reads, for messages, from the rows of TSR_DTYPE_MAP: "f4, f8, i4,
   i8" and "'<f4', '<f8', '<i4', '<i8'" (each past its leading ", "). */
#define TSR__NPY_KIND_ITEM(name, ENUM, value, c_type, size, npy, is_float, is_complex) ", " npy
#define TSR__NPY_DESCR_ITEM(name, ENUM, value, c_type, size, npy, is_float, is_complex)            \
  ", '<" npy "'"
static const char tsr__npy_kinds[] = TSR_DTYPE_MAP(TSR__NPY_KIND_ITEM);
static const char tsr__npy_descrs[] = TSR_DTYPE_MAP(TSR__NPY_DESCR_ITEM);
#undef TSR__NPY_KIND_ITEM
#undef TSR__NPY_DESCR_ITEM
#define TSR__NPY_KINDS (tsr__npy_kinds + 2)
#define TSR__NPY_DESCRS (tsr__npy_descrs + 2)

/* A printable excerpt of untrusted bytes for messages: at most `max` input bytes, non-ASCII
   and control bytes as \xNN, "..." when cut. */
static const char *tsr__npy_excerpt(const char *p, const char *end, size_t max, char *buf,
                                    size_t cap) {
  size_t o = 0, n = (size_t)(end - p);
  int cut = n > max;
  if (cut) n = max;
  for (size_t i = 0; i < n && o + 5 < cap; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c >= 0x20 && c < 0x7f) {
      buf[o++] = (char)c;
    } else {
      o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
    }
  }
  if (cut && o + 4 < cap) {
    memcpy(buf + o, "...", 3);
    o += 3;
  }
  buf[o < cap ? o : cap - 1] = '\0';
  return buf;
}

static const char *tsr__npy_shape_text(int ndim, const int64_t *shape, char *buf, size_t cap) {
  size_t o = 0;
  buf[0] = '\0';
  o += (size_t)snprintf(buf, cap, "(");
  for (int i = 0; i < ndim && o < cap; i++)
    o += (size_t)snprintf(buf + o, cap - o, "%s%" PRId64, i ? ", " : "", shape[i]);
  if (o < cap) snprintf(buf + o, cap - o, ndim == 1 ? ",)" : ")");
  return buf;
}

/* ------------------------------------------------------------------ the dict parser ---- */

typedef struct tsr__npy_parser {
  const char *begin; /* start of the dict text, for byte positions in messages */
  const char *p;
  const char *end;
  /* A well-formed descr of a dtype Tessera does not read: its text, reported as
     TSR_ERR_DTYPE once the rest of the header parsed (a malformed header stays
     TSR_ERR_FORMAT). `structured`: a list of fields rather than a type string. */
  const char *unsupported;
  size_t unsupported_len;
  bool structured;
} tsr__npy_parser;

static size_t tsr__npy_pos(const tsr__npy_parser *ps) {
  return (size_t)(ps->p - ps->begin);
}

static void tsr__npy_skip_ws(tsr__npy_parser *ps) {
  while (ps->p < ps->end &&
         (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r' || *ps->p == '\f'))
    ps->p++;
}

static int tsr__npy_is_ident(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static tsr_status tsr__npy_expected(const tsr__npy_parser *ps, const char *what) {
  char ex[96];
  if (ps->p >= ps->end)
    return NPY_FAIL("malformed header dictionary: expected %s at byte %zu, found the end of "
                    "the header",
                    what, tsr__npy_pos(ps));
  return NPY_FAIL("malformed header dictionary: expected %s at byte %zu, found '%s'", what,
                  tsr__npy_pos(ps), tsr__npy_excerpt(ps->p, ps->end, 16, ex, sizeof ex));
}

/* A Python string literal in single or double quotes, without escapes or prefixes. */
static tsr_status tsr__npy_string(tsr__npy_parser *ps, const char **s, size_t *n,
                                  const char *what) {
  if (ps->p >= ps->end || (*ps->p != '\'' && *ps->p != '"')) return tsr__npy_expected(ps, what);
  char quote = *ps->p;
  const char *start = ps->p + 1;
  const char *q = start;
  while (q < ps->end && *q != quote) {
    if (*q == '\\') {
      char ex[96];
      return NPY_FAIL("malformed header dictionary: escape sequence in string at byte %zu "
                      "('%s'); NumPy never writes one in a header",
                      (size_t)(q - ps->begin), tsr__npy_excerpt(ps->p, ps->end, 24, ex, sizeof ex));
    }
    if (*q == '\n') break;
    q++;
  }
  if (q >= ps->end || *q != quote)
    return NPY_FAIL("malformed header dictionary: unterminated string starting at byte %zu",
                    tsr__npy_pos(ps));
  *s = start;
  *n = (size_t)(q - start);
  ps->p = q + 1;
  return TSR_OK;
}

static int tsr__npy_equals(const char *s, size_t n, const char *lit) {
  return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

/* Whether t[0..tn) (a descr without its byte-order character) is a type string NumPy writes:
   a kind and an item size it has (bool, integers, floats, complex, datetimes with an optional
   unit, objects, bytes, strings, void). Tessera reads those of TSR_DTYPE_MAP's rows. */
static bool tsr__npy_numpy_type(const char *t, size_t tn) {
  if (tn == 0) return false;
  size_t i = 1, size = 0;
  while (i < tn && t[i] >= '0' && t[i] <= '9' && size < 100000)
    size = size * 10 + (size_t)(t[i++] - '0');
  const bool digits = i > 1;
  if ((t[0] == 'm' || t[0] == 'M') && i < tn && t[i] == '[' && t[tn - 1] == ']' && tn - i > 2) {
    for (size_t u = i + 1; u + 1 < tn; u++)
      if (!tsr__npy_is_ident(t[u])) return false;
    i = tn;
  }
  if (i != tn) return false;
  switch (t[0]) {
  case 'b': return size == 1;
  case 'i':
  case 'u': return size == 1 || size == 2 || size == 4 || size == 8;
  case 'f': return size == 2 || size == 4 || size == 8 || size == 12 || size == 16;
  case 'c': return size == 8 || size == 16 || size == 24 || size == 32;
  case 'm':
  case 'M': return size == 8;
  case 'O': return !digits || size == 8;
  case 'S':
  case 'U':
  case 'V': return digits;
  default: return false;
  }
}

/* A structured dtype's list of fields: skipped to its closing ']' (strings and nested
   brackets included) and recorded as unsupported. */
static tsr_status tsr__npy_structured(tsr__npy_parser *ps) {
  const char *start = ps->p;
  int depth = 0;
  for (; ps->p < ps->end; ps->p++) {
    char c = *ps->p;
    if (c == '\'' || c == '"') {
      const char *q = ps->p + 1;
      while (q < ps->end && *q != c && *q != '\n' && *q != '\\')
        q++;
      if (q >= ps->end || *q != c)
        return NPY_FAIL("malformed header dictionary: bad string in the structured descr "
                        "starting at byte %zu",
                        (size_t)(start - ps->begin));
      ps->p = q;
    } else if (c == '[' || c == '(') {
      depth++;
    } else if (c == ']' || c == ')') {
      if (--depth == 0) break;
    }
  }
  if (ps->p >= ps->end)
    return NPY_FAIL("malformed header dictionary: unterminated structured descr starting at "
                    "byte %zu",
                    (size_t)(start - ps->begin));
  ps->p++;
  ps->unsupported = start;
  ps->unsupported_len = (size_t)(ps->p - start);
  ps->structured = true;
  return TSR_OK;
}

static tsr_status tsr__npy_descr(tsr__npy_parser *ps, tsr_npy_header *h) {
  char ex[96];
  if (ps->p < ps->end && *ps->p == '[') return tsr__npy_structured(ps);
  if (ps->p < ps->end && *ps->p != '\'' && *ps->p != '"')
    return NPY_FAIL("unsupported dtype %s: only simple type strings (%s, either byte order) are "
                    "supported, not structured dtypes",
                    tsr__npy_excerpt(ps->p, ps->end, 32, ex, sizeof ex), TSR__NPY_DESCRS);
  const char *s;
  size_t n;
  TSR_CALL(tsr__npy_string(ps, &s, &n, "the descr string"));
  /* dtype.str: an optional byte-order character, the kind, the item size. */
  const char *t = s;
  size_t tn = n;
  char order = '=';
  if (tn > 0 && (t[0] == '<' || t[0] == '>' || t[0] == '=' || t[0] == '|')) {
    order = t[0];
    t++;
    tn--;
  }
  tsr_dtype dt = TSR_F64;
  bool ok = tsr__dtype_from_npy(t, tn, &dt);
  if (!ok && tsr__npy_numpy_type(t, tn)) {
    /* Well-formed, not ours: TSR_ERR_DTYPE once the whole header parsed. */
    ps->unsupported = s;
    ps->unsupported_len = n;
    h->dtype = TSR_F64; /* a placeholder, never returned */
    return TSR_OK;
  }
  if (!ok && tn > 0 && t[0] == 'c')
    return NPY_FAIL("unsupported dtype '%s': a complex item size NumPy never writes (a complex "
                    "item is 8 (c8: two f4), 16 (c16: two f8), 24 or 32 bytes; Tessera reads c8 "
                    "and c16)",
                    tsr__npy_excerpt(s, s + n, 32, ex, sizeof ex));
  if (!ok)
    return NPY_FAIL("unsupported dtype '%s' (supported: %s in either byte order)",
                    tsr__npy_excerpt(s, s + n, 32, ex, sizeof ex), TSR__NPY_KINDS);
  if (order == '|')
    return NPY_FAIL("unsupported dtype '%s': byte order '|' (not applicable) is invalid for a "
                    "%zu-byte type",
                    tsr__npy_excerpt(s, s + n, 32, ex, sizeof ex), tsr__dtype_size(dt));
  h->dtype = dt;
  h->big_endian = order == '>' || (order == '=' && tsr__host_big_endian());
  return TSR_OK;
}

/* TSR_ERR_DTYPE for a well-formed header whose descr (recorded by tsr__npy_descr) Tessera
   does not read; the message gives the descr. */
static tsr_status tsr__npy_unsupported(const tsr__npy_parser *ps) {
  char ex[96];
  const char *d = tsr__npy_excerpt(ps->unsupported, ps->unsupported + ps->unsupported_len,
                                   ps->structured ? 48 : 32, ex, sizeof ex);
  if (ps->structured)
    return tsr__set_error(TSR_ERR_DTYPE, __func__,
                          "unsupported dtype %s: only simple type strings (%s, either byte order) "
                          "are supported, not structured dtypes",
                          d, TSR__NPY_DESCRS);
  return tsr__set_error(TSR_ERR_DTYPE, __func__,
                        "unsupported dtype '%s' (supported: %s in either byte order)", d,
                        TSR__NPY_KINDS);
}

static tsr_status tsr__npy_fortran_order(tsr__npy_parser *ps, tsr_npy_header *h) {
  const char *s = ps->p;
  while (ps->p < ps->end && tsr__npy_is_ident(*ps->p))
    ps->p++;
  size_t n = (size_t)(ps->p - s);
  if (tsr__npy_equals(s, n, "True")) {
    h->fortran_order = 1;
  } else if (tsr__npy_equals(s, n, "False")) {
    h->fortran_order = 0;
  } else {
    char ex[96];
    ps->p = s;
    return NPY_FAIL("malformed header dictionary: fortran_order must be True or False, found "
                    "'%s'",
                    tsr__npy_excerpt(s, ps->end, 16, ex, sizeof ex));
  }
  return TSR_OK;
}

/* A non-negative Python int literal (decimal, no leading zeros, optional Python 2 'L'). */
static tsr_status tsr__npy_dim(tsr__npy_parser *ps, int64_t *out) {
  char ex[96];
  const char *s = ps->p;
  if (ps->p < ps->end && *ps->p == '-') {
    const char *q = ps->p + 1;
    while (q < ps->end && *q >= '0' && *q <= '9')
      q++;
    return NPY_FAIL("negative dimension %s in shape", tsr__npy_excerpt(s, q, 24, ex, sizeof ex));
  }
  if (ps->p >= ps->end || *ps->p < '0' || *ps->p > '9')
    return tsr__npy_expected(ps, "a dimension (non-negative integer) in shape");
  int64_t v = 0;
  while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
    int d = *ps->p - '0';
    if (v > (INT64_MAX - d) / 10) {
      const char *q = ps->p;
      while (q < ps->end && *q >= '0' && *q <= '9')
        q++;
      return NPY_FAIL("dimension %s in shape does not fit in int64",
                      tsr__npy_excerpt(s, q, 40, ex, sizeof ex));
    }
    v = v * 10 + d;
    ps->p++;
  }
  if (ps->p - s > 1 && *s == '0')
    return NPY_FAIL("malformed header dictionary: dimension '%s' has a leading zero",
                    tsr__npy_excerpt(s, ps->p, 24, ex, sizeof ex));
  if (ps->p < ps->end && (*ps->p == 'L' || *ps->p == 'l')) ps->p++;
  if (ps->p < ps->end && tsr__npy_is_ident(*ps->p))
    return tsr__npy_expected(ps, "',' or ')' after a dimension in shape");
  *out = v;
  return TSR_OK;
}

/* A Python tuple of ints: () for 0-d, (n,) for 1-d, (a, b) or (a, b,) for more. */
static tsr_status tsr__npy_shape(tsr__npy_parser *ps, tsr_npy_header *h) {
  if (ps->p >= ps->end || *ps->p != '(')
    return tsr__npy_expected(ps, "'(' starting the shape tuple");
  const char *open = ps->p;
  ps->p++;
  tsr__npy_skip_ws(ps);
  int ndim = 0;
  while (ps->p < ps->end && *ps->p != ')') {
    if (ndim == TSR_MAX_DIMS)
      return NPY_FAIL("shape has more than %d dimensions (TSR_MAX_DIMS)", TSR_MAX_DIMS);
    TSR_CALL(tsr__npy_dim(ps, &h->shape[ndim]));
    ndim++;
    tsr__npy_skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      tsr__npy_skip_ws(ps);
    } else if (ps->p < ps->end && *ps->p == ')') {
      if (ndim == 1) {
        char ex[96];
        return NPY_FAIL("malformed header dictionary: shape %s is a parenthesized integer, "
                        "not a tuple (a 1-d shape is written (n,))",
                        tsr__npy_excerpt(open, ps->p + 1, 40, ex, sizeof ex));
      }
    } else {
      return tsr__npy_expected(ps, "',' or ')' in shape");
    }
  }
  if (ps->p >= ps->end) return tsr__npy_expected(ps, "')' closing the shape tuple");
  ps->p++;
  h->ndim = ndim;
  return TSR_OK;
}

enum { NPY_KEY_DESCR = 1, NPY_KEY_FORTRAN = 2, NPY_KEY_SHAPE = 4 };

static tsr_status tsr__npy_dict(tsr__npy_parser *ps, tsr_npy_header *h) {
  unsigned seen = 0;
  tsr__npy_skip_ws(ps);
  if (ps->p >= ps->end || *ps->p != '{')
    return tsr__npy_expected(ps, "'{' starting the dictionary");
  ps->p++;
  for (;;) {
    tsr__npy_skip_ws(ps);
    if (ps->p < ps->end && *ps->p == '}') break;
    const char *key;
    size_t keylen;
    size_t keypos = tsr__npy_pos(ps);
    TSR_CALL(tsr__npy_string(ps, &key, &keylen, "a quoted key or '}'"));
    unsigned which;
    if (tsr__npy_equals(key, keylen, "descr")) {
      which = NPY_KEY_DESCR;
    } else if (tsr__npy_equals(key, keylen, "fortran_order")) {
      which = NPY_KEY_FORTRAN;
    } else if (tsr__npy_equals(key, keylen, "shape")) {
      which = NPY_KEY_SHAPE;
    } else {
      char ex[96];
      return NPY_FAIL("malformed header dictionary: unknown key '%s' at byte %zu (expected "
                      "descr, fortran_order, shape)",
                      tsr__npy_excerpt(key, key + keylen, 32, ex, sizeof ex), keypos);
    }
    if (seen & which)
      return NPY_FAIL("malformed header dictionary: duplicate key '%.*s' at byte %zu", (int)keylen,
                      key, keypos);
    seen |= which;
    tsr__npy_skip_ws(ps);
    if (ps->p >= ps->end || *ps->p != ':') return tsr__npy_expected(ps, "':' after a key");
    ps->p++;
    tsr__npy_skip_ws(ps);
    if (which == NPY_KEY_DESCR) {
      TSR_CALL(tsr__npy_descr(ps, h));
    } else if (which == NPY_KEY_FORTRAN) {
      TSR_CALL(tsr__npy_fortran_order(ps, h));
    } else {
      TSR_CALL(tsr__npy_shape(ps, h));
    }
    tsr__npy_skip_ws(ps);
    if (ps->p < ps->end && *ps->p == ',') {
      ps->p++;
      continue;
    }
    if (ps->p < ps->end && *ps->p == '}') break;
    return tsr__npy_expected(ps, "',' or '}' after a value");
  }
  ps->p++; /* '}' */
  tsr__npy_skip_ws(ps);
  if (ps->p != ps->end) {
    char ex[96];
    return NPY_FAIL("malformed header: unexpected '%s' after the dictionary at byte %zu",
                    tsr__npy_excerpt(ps->p, ps->end, 16, ex, sizeof ex), tsr__npy_pos(ps));
  }
  const char *missing = !(seen & NPY_KEY_DESCR)     ? "descr"
                        : !(seen & NPY_KEY_FORTRAN) ? "fortran_order"
                        : !(seen & NPY_KEY_SHAPE)   ? "shape"
                                                    : NULL;
  if (missing) return NPY_FAIL("malformed header dictionary: missing key '%s'", missing);
  return TSR_OK;
}

/* ------------------------------------------------------------------ public ------------- */

tsr_status tsr_npy_parse_header(const void *buf, size_t len, tsr_npy_header *header) {
  TSR_API_ENTRY();
  TSR_CHECK(header != NULL, TSR_ERR_NULL_POINTER, "header is NULL");
  TSR_CHECK(buf != NULL || len == 0, TSR_ERR_NULL_POINTER, "buf is NULL");
  const unsigned char *b = (const unsigned char *)buf;
  char ex[96];

  if (len == 0) return NPY_FAIL("not a .npy file: it is empty");
  size_t m = len < NPY_MAGIC_LEN ? len : NPY_MAGIC_LEN;
  if (memcmp(b, NPY_MAGIC, m) != 0)
    return NPY_FAIL(
        "not a .npy file: the first bytes are '%s', expected the magic '\\x93NUMPY'",
        tsr__npy_excerpt((const char *)b, (const char *)b + m, NPY_MAGIC_LEN, ex, sizeof ex));
  if (len < 10) return NPY_FAIL("truncated header: need at least 10 bytes, file has %zu", len);
  int major = b[6], minor = b[7];
  if (major < 1 || major > 3 || minor != 0)
    return NPY_FAIL("unsupported .npy format version %d.%d (supported: 1.0, 2.0, 3.0)", major,
                    minor);
  size_t prefix = major == 1 ? 10 : 12;
  if (len < prefix)
    return NPY_FAIL("truncated header: need at least %zu bytes, file has %zu", prefix, len);
  size_t hlen = major == 1
                    ? (size_t)b[8] | (size_t)b[9] << 8
                    : (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
  if (hlen > len - prefix) {
    /* prefix + hlen cannot overflow 64-bit size_t; report it as the total needed. */
    return NPY_FAIL("truncated header: need %" PRIu64 " bytes, file has %zu",
                    (uint64_t)prefix + (uint64_t)hlen, len);
  }

  tsr_npy_header h;
  memset(&h, 0, sizeof h);
  h.major_version = major;
  for (int i = 0; i < TSR_MAX_DIMS; i++)
    h.shape[i] = 1;
  tsr__npy_parser ps = {(const char *)b + prefix,
                        (const char *)b + prefix,
                        (const char *)b + prefix + hlen,
                        NULL,
                        0,
                        false};
  TSR_CALL(tsr__npy_dict(&ps, &h));
  if (ps.unsupported) return tsr__npy_unsupported(&ps);
  for (int i = h.ndim; i < TSR_MAX_DIMS; i++)
    h.shape[i] = 1;

  /* Element and byte counts must fit int64 and size_t even when a dimension is 0, so that
     no caller ever sees a header whose other dimensions overflow. */
  int64_t nonzero = 1;
  int has_zero = 0;
  for (int i = 0; i < h.ndim; i++) {
    if (h.shape[i] == 0) {
      has_zero = 1;
    } else if (h.shape[i] > INT64_MAX / nonzero) {
      char sh[256];
      return NPY_FAIL("shape %s has too many elements: the product overflows int64",
                      tsr__npy_shape_text(h.ndim, h.shape, sh, sizeof sh));
    } else {
      nonzero *= h.shape[i];
    }
  }
  int64_t itemsize = (int64_t)tsr__dtype_size(h.dtype);
  if (nonzero > INT64_MAX / itemsize || (uint64_t)(nonzero * itemsize) > (uint64_t)SIZE_MAX) {
    char sh[256];
    return NPY_FAIL("shape %s is too large: its byte count overflows",
                    tsr__npy_shape_text(h.ndim, h.shape, sh, sizeof sh));
  }
  h.size = has_zero ? 0 : nonzero;
  h.data_offset = prefix + hlen;
  *header = h;
  return TSR_OK;
}

tsr_status tsr_npy_format_header(tsr_dtype dtype, int fortran_order, int ndim, const int64_t *shape,
                                 char *buf, size_t cap, size_t *len) {
  TSR_API_ENTRY();
  TSR_CHECK(buf != NULL, TSR_ERR_NULL_POINTER, "buf is NULL");
  TSR_CHECK(len != NULL, TSR_ERR_NULL_POINTER, "len is NULL");
  TSR_CHECK(shape != NULL || ndim <= 0, TSR_ERR_NULL_POINTER, "shape is NULL");
  const char *kind = tsr__dtype_npy(dtype);
  if (kind == NULL) return tsr__set_error(TSR_ERR_DTYPE, __func__, "unknown dtype %d", (int)dtype);
  if (ndim < 0 || ndim > TSR_MAX_DIMS)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__, "ndim %d is outside 0..%d", ndim,
                          TSR_MAX_DIMS);
  for (int i = 0; i < ndim; i++)
    if (shape[i] < 0)
      return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                            "shape[%d] is negative (%" PRId64 ")", i, shape[i]);

  /* NumPy's own layout, so that files diff cleanly against numpy.save output. */
  char dict[64 + TSR_MAX_DIMS * 24];
  char sh[TSR_MAX_DIMS * 24 + 8];
  int n =
      snprintf(dict, sizeof dict, "{'descr': '<%s', 'fortran_order': %s, 'shape': %s, }", kind,
               fortran_order ? "True" : "False", tsr__npy_shape_text(ndim, shape, sh, sizeof sh));
  if (n < 0 || (size_t)n >= sizeof dict)
    return tsr__set_error(TSR_ERR_INTERNAL, __func__, "header dictionary does not fit");

  /* Pad with spaces and a final '\n' so that the data starts on a 64-byte boundary. */
  size_t prefix = 10;
  size_t total = (prefix + (size_t)n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
  if (total - prefix > 65535) {
    prefix = 12;
    total = (prefix + (size_t)n + 1 + NPY_ALIGN - 1) / NPY_ALIGN * NPY_ALIGN;
  }
  if (cap < total)
    return tsr__set_error(TSR_ERR_INVALID_ARGUMENT, __func__,
                          "buffer of %zu bytes is too small: the header needs %zu", cap, total);
  size_t hlen = total - prefix;
  memcpy(buf, NPY_MAGIC, NPY_MAGIC_LEN);
  buf[6] = prefix == 10 ? 1 : 2;
  buf[7] = 0;
  buf[8] = (char)(hlen & 0xff);
  buf[9] = (char)((hlen >> 8) & 0xff);
  if (prefix == 12) {
    buf[10] = (char)((hlen >> 16) & 0xff);
    buf[11] = (char)((hlen >> 24) & 0xff);
  }
  memcpy(buf + prefix, dict, (size_t)n);
  memset(buf + prefix + n, ' ', total - prefix - (size_t)n - 1);
  buf[total - 1] = '\n';
  *len = total;
  return TSR_OK;
}
