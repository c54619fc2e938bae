/* The sandboxed command's environment, for launcher.c: envpolicy.py's rule, step for step, in C.
 *
 * A variable is inherited when sandbox.env_keep names it exactly; else when its name is in ENV_CORE, or matches
 * ENV_ALLOW or an env_keep glob and no env_scrub pattern (ENV_CORE names exempt), and its value does not look like
 * a credential (URL user info, a token shape, a JWT, an Authorization/API-key/cookie header, Bearer/Basic, a
 * credential in a URL query, a PEM block). The lists come from envpolicy.h, generated from envpolicy.py at build
 * time (compiled.py): one source for both launchers. tests/sandbox/test_envpolicy.py runs both on the same
 * environments. Included by launcher.c only (static functions; it needs glob_match, in_names and count there).
 */
#include "envpolicy.h"

static int in_class(unsigned char c, int cls) {
    int upper = c >= 'A' && c <= 'Z', digit = c >= '0' && c <= '9', lower = c >= 'a' && c <= 'z';
    if (cls == CLS_UPPER)
        return upper || digit;
    return upper || digit || lower || (cls == CLS_WORD && (c == '_' || c == '-'));
}

static size_t run_of(const char *v, size_t i, int cls) {
    size_t k = i;
    while (v[k] && in_class((unsigned char)v[k], cls))
        k++;
    return k - i;
}

static int word_start(const char *v, size_t i) { return i == 0 || !in_class((unsigned char)v[i - 1], CLS_WORD); }

static int url_stop(char c) { return c == '\0' || strchr("/@?# \t\r\n", c) != NULL; }

/* envpolicy._userinfo: scheme://user[:pw]@ (not git@), or a scheme-less user:pw@ at the start */
static int userinfo(const char *v) {
    for (const char *p = strstr(v, "://"); p; p = strstr(p + 3, "://")) {
        const char *q = p + 3;
        while (!url_stop(*q))
            q++;
        if (*q != '@' || q == p + 3)
            continue;
        size_t ulen = (size_t)(q - (p + 3));
        int ok = 0;
        for (size_t i = 0; URL_USERS_OK[i] && !ok; i++)
            ok = strlen(URL_USERS_OK[i]) == ulen && memcmp(URL_USERS_OK[i], p + 3, ulen) == 0;
        if (!ok)
            return 1;
    }
    int colon = 0;
    const char *q = v;
    for (; !url_stop(*q); q++)
        colon = colon || *q == ':';
    return colon && *q == '@';
}

static const char *token_shape(const char *v) {
    for (size_t s = 0; TOKEN_SHAPES[s].prefix; s++) {
        const struct token_shape *t = &TOKEN_SHAPES[s];
        size_t plen = strlen(t->prefix);
        for (const char *p = strstr(v, t->prefix); p; p = strstr(p + 1, t->prefix))
            if (word_start(v, (size_t)(p - v)) && run_of(v, (size_t)(p - v) + plen, t->cls) >= (size_t)t->shortest)
                return t->label;
    }
    return NULL;
}

/* envpolicy._jwt: eyJ<7+>.eyJ<7+>. */
static int jwt(const char *v) {
    for (const char *p = strstr(v, "eyJ"); p; p = strstr(p + 1, "eyJ")) {
        size_t i = (size_t)(p - v);
        if (!word_start(v, i))
            continue;
        size_t a = i + 3 + run_of(v, i + 3, CLS_WORD);
        if (a - i < 10 || strncmp(v + a, ".eyJ", 4) != 0)
            continue;
        size_t b = a + 4 + run_of(v, a + 4, CLS_WORD);
        if (b - a - 1 >= 10 && v[b] == '.')
            return 1;
    }
    return 0;
}

static int header(const char *low) {
    for (size_t h = 0; HEADER_NAMES[h]; h++)
        for (const char *p = strstr(low, HEADER_NAMES[h]); p; p = strstr(p + 1, HEADER_NAMES[h])) {
            const char *q = p + strlen(HEADER_NAMES[h]);
            while (*q && strchr(" \t\"'", *q))
                q++;
            if (*q == ':' || *q == '=')
                return 1;
        }
    return 0;
}

static int token68(unsigned char c) { return in_class(c, CLS_WORD) || (c && strchr("._~+/=", c)); }

static int scheme(const char *low) {
    for (size_t s = 0; AUTH_SCHEMES[s]; s++)
        for (const char *p = strstr(low, AUTH_SCHEMES[s]); p; p = strstr(p + 1, AUTH_SCHEMES[s])) {
            const char *q = p + strlen(AUTH_SCHEMES[s]), *r;
            size_t spaces = 0, body = 0;
            while (q[spaces] == ' ' || q[spaces] == '\t')
                spaces++;
            for (r = q + spaces; token68((unsigned char)*r); r++)
                body++;
            if (word_start(low, (size_t)(p - low)) && spaces && body >= 8)
                return 1;
        }
    return 0;
}

static int query(const char *low) {
    for (size_t k = 0; QUERY_NAMES[k]; k++)
        for (const char *p = strstr(low, QUERY_NAMES[k]); p; p = strstr(p + 1, QUERY_NAMES[k])) {
            const char *q = p + strlen(QUERY_NAMES[k]);
            if (p > low && strchr("?&;", p[-1]) && q[0] == '=' && q[1] && !strchr("& \t#", q[1]))
                return 1;
        }
    return 0;
}

/* envpolicy.credential: what kind of credential VALUE looks like, or NULL */
static const char *credential(const char *v) {
    if (strstr(v, "-----BEGIN "))
        return "PEM block";
    if (strchr(v, '@') && userinfo(v))
        return "URL user-info";
    const char *label = token_shape(v);
    if (label)
        return label;
    if (jwt(v))
        return "JWT";
    char *low = strdup(v);
    if (!low)
        return "unknown (out of memory)"; /* fail closed: dropped */
    for (char *c = low; *c; c++)
        if (*c >= 'A' && *c <= 'Z')
            *c = (char)(*c + 32);
    label = header(low) ? "credential header" : scheme(low) ? "Bearer/Basic credential"
                                                : query(low) ? "credential in a URL query" : NULL;
    free(low);
    return label;
}

/* any of PATTERNS (count n) matches NAME; only_globs: only the entries holding a '*', only_exact: only the others */
static int any_match(const char *const *pats, size_t n, const char *name, size_t nlen, int only_globs,
                     int only_exact) {
    for (size_t i = 0; i < n; i++) {
        int glob = strchr(pats[i], '*') != NULL;
        if ((only_globs && !glob) || (only_exact && glob))
            continue;
        if (glob_match(pats[i], name, nlen))
            return 1;
    }
    return 0;
}

/* envpolicy.Rule.reason == None: the command inherits the variable E ("NAME=VALUE") */
static int inherits(const opts_t *o, const char *e) {
    const char *eq = strchr(e, '=');
    size_t nlen = eq ? (size_t)(eq - e) : strlen(e);
    const char *const *keep = (const char *const *)o->keep.items;
    if (any_match(keep, o->keep.n, e, nlen, 0, 1))
        return 1; /* named exactly by sandbox.env_keep: passed as it is */
    if (!in_names(e, nlen, ENV_CORE, count(ENV_CORE))) {
        if (!any_match(ENV_ALLOW, count(ENV_ALLOW), e, nlen, 0, 0) && !any_match(keep, o->keep.n, e, nlen, 1, 0))
            return 0;
        const char *const *scrub = o->scrub_given ? (const char *const *)o->scrub.items : SECRET_ENV;
        if (any_match(scrub, o->scrub_given ? o->scrub.n : count(SECRET_ENV), e, nlen, 0, 0))
            return 0;
    }
    return credential(eq ? eq + 1 : "") == NULL;
}

/* a growable environment block (NULL-terminated) */
typedef struct {
    char **items;
    size_t n, cap;
} env_t;

static int env_push(env_t *env, char *entry) {
    if (env->n + 1 >= env->cap) {
        size_t cap = env->cap ? 2 * env->cap : 64;
        char **items = realloc(env->items, cap * sizeof(char *));
        if (!items)
            return -1;
        env->items = items;
        env->cap = cap;
    }
    env->items[env->n++] = entry;
    env->items[env->n] = NULL;
    return 0;
}

/* NAME=VALUE in ENV, replacing an entry of that name: the launcher's own variables, set after the scrub */
static int env_set(env_t *env, const char *name, const char *value) {
    size_t nlen = strlen(name);
    char *entry = malloc(nlen + strlen(value) + 2);
    if (!entry)
        return -1;
    sprintf(entry, "%s=%s", name, value);
    for (size_t i = 0; i < env->n; i++)
        if (strncmp(env->items[i], name, nlen) == 0 && env->items[i][nlen] == '=') {
            env->items[i] = entry;
            return 0;
        }
    return env_push(env, entry);
}

/* The inherited variables (copies: the original block may be wiped, wipe_environ_block); 0 or -1 (out of memory) */
static int scrub_env(const opts_t *o, env_t *env) {
    for (size_t i = 0; environ[i]; i++) {
        if (!inherits(o, environ[i]))
            continue;
        char *copy = strdup(environ[i]);
        if (!copy || env_push(env, copy) < 0)
            return -1;
    }
    if (!env->items && !(env->items = calloc(env->cap = 1, sizeof(char *)))) /* a block even when none is inherited */
        return -1;
    return 0;
}
