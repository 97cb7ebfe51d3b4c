// Whisper's decoder on the CPU: every layer of a decoder step (or of a
// prompt) in one call, its work split over a pool of threads that meet at
// spinning barriers, the weights F16 or F32 as the file holds them, the
// self- and cross-attention caches in the layout the step reads (per head,
// position by position). See decoder.go.
//
// Rounding follows ggml's CPU products, as whisper.cpp computes without
// flash attention: with F16 weights and caches, every product's other
// operand is rounded to F16 first (the norms' outputs, the queries, the
// attention's probabilities and outputs, the MLP's hidden values), and
// sums are float.

#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "attn.h"
#include "dec.h"
#include "simd.h"

#ifdef BOXD_ATTN_AVX2
#define relax() _mm_pause()
#else
#define relax() ((void)0)
#endif

// ---- A pool of threads: one job at a time, run by every thread with its
// index; barriers inside the job. Idle workers spin briefly for the next
// job (a decoder's steps come a fraction of a millisecond apart), then
// sleep on a condition variable.

// idleSpins is how long an idle worker spins (pauses) before it sleeps:
// tens of microseconds.
#define idleSpins 20000
// barrierSpins is how long a barrier spins before it yields the core
// between checks (another engine may need it).
#define barrierSpins 200000

typedef struct pool {
    int n; // threads, the caller's included
    pthread_t *th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    _Atomic int gen, done, sleepers, quit;
    void (*fn)(void *, int, int);
    void *arg;
    _Atomic int bcount, bsense;
} pool;

typedef struct {
    pool *p;
    int tid;
} workerArg;

static void *worker(void *a) {
    pool *p = ((workerArg *)a)->p;
    int tid = ((workerArg *)a)->tid;
    free(a);
    int seen = 0;
    for (;;) {
        int g, spins = 0;
        while ((g = atomic_load(&p->gen)) == seen) {
            if (++spins < idleSpins) {
                relax();
                continue;
            }
            pthread_mutex_lock(&p->mu);
            atomic_fetch_add(&p->sleepers, 1);
            while ((g = atomic_load(&p->gen)) == seen) {
                pthread_cond_wait(&p->cv, &p->mu);
            }
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->mu);
            break;
        }
        seen = g;
        if (atomic_load(&p->quit)) {
            return NULL;
        }
        p->fn(p->arg, tid, p->n);
        atomic_fetch_add(&p->done, 1);
    }
}

static void wake(pool *p) {
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->cv);
        pthread_mutex_unlock(&p->mu);
    }
}

static pool *poolNew(int n) {
    pool *p = calloc(1, sizeof *p);
    if (!p) {
        return NULL;
    }
    p->n = n < 1 ? 1 : n;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    if (p->n > 1) {
        p->th = calloc(p->n - 1, sizeof *p->th);
        if (!p->th) {
            free(p);
            return NULL;
        }
        for (int i = 1; i < p->n; i++) {
            workerArg *a = malloc(sizeof *a);
            if (a) {
                a->p = p, a->tid = i;
            }
            if (!a || pthread_create(&p->th[i - 1], NULL, worker, a) != 0) {
                free(a);
                p->n = i; // the threads started so far
                break;
            }
        }
    }
    return p;
}

static void poolFree(pool *p) {
    if (!p) {
        return;
    }
    atomic_store(&p->quit, 1);
    atomic_fetch_add(&p->gen, 1);
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    for (int i = 1; i < p->n; i++) {
        pthread_join(p->th[i - 1], NULL);
    }
    free(p->th);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p);
}

// poolRun runs fn on every thread and returns when all are done.
static void poolRun(pool *p, void (*fn)(void *, int, int), void *arg) {
    if (p->n == 1) {
        fn(arg, 0, 1);
        return;
    }
    p->fn = fn, p->arg = arg;
    atomic_store(&p->done, 0);
    atomic_fetch_add(&p->gen, 1);
    wake(p);
    fn(arg, 0, p->n);
    for (int spins = 0; atomic_load(&p->done) < p->n - 1;) {
        if (++spins < barrierSpins) {
            relax();
        } else {
            sched_yield();
        }
    }
}

static void barrier(pool *p) {
    if (p->n == 1) {
        return;
    }
    int sense = atomic_load(&p->bsense);
    if (atomic_fetch_add(&p->bcount, 1) == p->n - 1) {
        atomic_store(&p->bcount, 0);
        atomic_store(&p->bsense, sense ^ 1);
        return;
    }
    for (int spins = 0; atomic_load(&p->bsense) == sense;) {
        if (++spins < barrierSpins) {
            relax();
        } else {
            sched_yield();
        }
    }
}

// ---- Numbers.

// round16 rounds x to F16 precision in place.
static void round16(float *x, long n) {
    long i = 0;
#ifdef BOXD_ATTN_AVX2
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(x + i, _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT)));
    }
    for (; i < n; i++) {
        x[i] = _cvtsh_ss(_cvtss_sh(x[i], _MM_FROUND_TO_NEAREST_INT));
    }
#else
    for (; i < n; i++) {
        x[i] = (float)(_Float16)x[i];
    }
#endif
}

// widen writes n F16 values as floats.
static void widen(const uint16_t *h, float *x, long n) {
    long i = 0;
#ifdef BOXD_ATTN_AVX2
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_ps(x + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(h + i))));
    }
    for (; i < n; i++) {
        x[i] = _cvtsh_ss(h[i]);
    }
#else
    for (; i < n; i++) {
        _Float16 f;
        memcpy(&f, h + i, 2);
        x[i] = (float)f;
    }
#endif
}

static inline float gelu(float x) { return 0.5f * x * (1.0f + erff(x * 0.70710678118654752440f)); }

// dot is k[0..d)·q, k F16 (k16) or F32; d a multiple of 16.
static inline float dot(const uint16_t *k16, const float *k32, const float *q, int d) {
#ifdef BOXD_ATTN_AVX2
    __m256 a0 = _mm256_setzero_ps(), a1 = a0;
    for (int c = 0; c < d; c += 16) {
        __m256 k0, k1;
        if (k16) {
            k0 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k16 + c)));
            k1 = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k16 + c + 8)));
        } else {
            k0 = _mm256_loadu_ps(k32 + c);
            k1 = _mm256_loadu_ps(k32 + c + 8);
        }
        a0 = _mm256_fmadd_ps(k0, _mm256_loadu_ps(q + c), a0);
        a1 = _mm256_fmadd_ps(k1, _mm256_loadu_ps(q + c + 8), a1);
    }
    return hsum(_mm256_add_ps(a0, a1));
#else
    float s = 0;
    for (int c = 0; c < d; c++) {
        float k;
        if (k16) {
            _Float16 f;
            memcpy(&f, k16 + c, 2);
            k = (float)f;
        } else {
            k = k32[c];
        }
        s += k * q[c];
    }
    return s;
#endif
}

#ifdef BOXD_ATTN_AVX2
// dot8 is the dot products of 8 rows of k (d apart, F16 or F32) with q,
// in one vector: eight sums and one reduction, not eight.
static inline __m256 dot8(const uint16_t *k16, const float *k32, const float *q, int d) {
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    for (int c = 0; c < d; c += 8) {
        __m256 qv = _mm256_loadu_ps(q + c);
        if (k16) {
            const uint16_t *k = k16 + c;
            a0 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)k)), qv, a0);
            a1 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k + d))), qv, a1);
            a2 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k + 2 * (size_t)d))), qv, a2);
            a3 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k + 3 * (size_t)d))), qv, a3);
            a4 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k + 4 * (size_t)d))), qv, a4);
            a5 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k + 5 * (size_t)d))), qv, a5);
            a6 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k + 6 * (size_t)d))), qv, a6);
            a7 = _mm256_fmadd_ps(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(k + 7 * (size_t)d))), qv, a7);
        } else {
            const float *k = k32 + c;
            a0 = _mm256_fmadd_ps(_mm256_loadu_ps(k), qv, a0);
            a1 = _mm256_fmadd_ps(_mm256_loadu_ps(k + d), qv, a1);
            a2 = _mm256_fmadd_ps(_mm256_loadu_ps(k + 2 * (size_t)d), qv, a2);
            a3 = _mm256_fmadd_ps(_mm256_loadu_ps(k + 3 * (size_t)d), qv, a3);
            a4 = _mm256_fmadd_ps(_mm256_loadu_ps(k + 4 * (size_t)d), qv, a4);
            a5 = _mm256_fmadd_ps(_mm256_loadu_ps(k + 5 * (size_t)d), qv, a5);
            a6 = _mm256_fmadd_ps(_mm256_loadu_ps(k + 6 * (size_t)d), qv, a6);
            a7 = _mm256_fmadd_ps(_mm256_loadu_ps(k + 7 * (size_t)d), qv, a7);
        }
    }
    // hadd pairs lanes within each half: two rounds leave rows 0-3 (and
    // 4-7) as the halves' partial sums, which the last add joins.
    __m256 t0 = _mm256_hadd_ps(_mm256_hadd_ps(a0, a1), _mm256_hadd_ps(a2, a3));
    __m256 t1 = _mm256_hadd_ps(_mm256_hadd_ps(a4, a5), _mm256_hadd_ps(a6, a7));
    return _mm256_add_ps(_mm256_permute2f128_ps(t0, t1, 0x20), _mm256_permute2f128_ps(t0, t1, 0x31));
}
#endif

// attend writes out[0..d) = Σ_j p_j·v_j over n positions, p the softmax of
// scale·k_j·q, as ggml's soft_max_ext (the largest subtracted, the sum in
// double, each exponential times the sum's inverse); k and v are n rows
// of d, F16 (f16: the probabilities, and out, are rounded to F16, as ggml
// rounds the other operand of an F16 product) or F32. scores holds n
// floats.
static void attend(const void *K, const void *V, int f16, int n, int d, const float *q, float scale, float *scores, float *out) {
    const uint16_t *k16 = f16 ? K : NULL, *v16 = f16 ? V : NULL;
    const float *k32 = f16 ? NULL : K, *v32 = f16 ? NULL : V;
    float mx = -INFINITY;
    int j = 0;
#ifdef BOXD_ATTN_AVX2
    __m256 vmx = _mm256_set1_ps(-INFINITY), vs = _mm256_set1_ps(scale);
    for (; j + 8 <= n; j += 8) {
        __m256 s = _mm256_mul_ps(vs, dot8(k16 ? k16 + (size_t)j * d : NULL, k32 ? k32 + (size_t)j * d : NULL, q, d));
        _mm256_storeu_ps(scores + j, s);
        vmx = _mm256_max_ps(vmx, s);
    }
    float lanes[8];
    _mm256_storeu_ps(lanes, vmx);
    for (int i = 0; i < 8; i++) {
        mx = lanes[i] > mx ? lanes[i] : mx;
    }
#endif
    for (; j < n; j++) {
        float s = scale * dot(k16 ? k16 + (size_t)j * d : NULL, k32 ? k32 + (size_t)j * d : NULL, q, d);
        scores[j] = s;
        mx = s > mx ? s : mx;
    }
    double sum = 0;
    j = 0;
#ifdef BOXD_ATTN_AVX2
    __m256 vm = _mm256_set1_ps(mx);
    for (; j + 8 <= n; j += 8) {
        __m256 e = exp8(_mm256_sub_ps(_mm256_loadu_ps(scores + j), vm));
        _mm256_storeu_ps(scores + j, e);
        sum += hsum(e);
    }
#endif
    for (; j < n; j++) {
        scores[j] = expf(scores[j] - mx);
        sum += scores[j];
    }
    float inv = (float)(1.0 / sum);
    for (j = 0; j < n; j++) {
        scores[j] *= inv;
    }
    if (f16) {
        round16(scores, n);
    }
#ifdef BOXD_ATTN_AVX2
    int c = 0;
    for (; c + 64 <= d; c += 64) {
        // 64 columns at once: eight sums, one pass over the positions.
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
        for (j = 0; j < n; j++) {
            __m256 p = _mm256_broadcast_ss(scores + j);
            if (v16) {
                const __m128i *v = (const __m128i *)(v16 + (size_t)j * d + c);
                a0 = _mm256_fmadd_ps(p, _mm256_cvtph_ps(_mm_loadu_si128(v)), a0);
                a1 = _mm256_fmadd_ps(p, _mm256_cvtph_ps(_mm_loadu_si128(v + 1)), a1);
                a2 = _mm256_fmadd_ps(p, _mm256_cvtph_ps(_mm_loadu_si128(v + 2)), a2);
                a3 = _mm256_fmadd_ps(p, _mm256_cvtph_ps(_mm_loadu_si128(v + 3)), a3);
                a4 = _mm256_fmadd_ps(p, _mm256_cvtph_ps(_mm_loadu_si128(v + 4)), a4);
                a5 = _mm256_fmadd_ps(p, _mm256_cvtph_ps(_mm_loadu_si128(v + 5)), a5);
                a6 = _mm256_fmadd_ps(p, _mm256_cvtph_ps(_mm_loadu_si128(v + 6)), a6);
                a7 = _mm256_fmadd_ps(p, _mm256_cvtph_ps(_mm_loadu_si128(v + 7)), a7);
            } else {
                const float *v = v32 + (size_t)j * d + c;
                a0 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v), a0);
                a1 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 8), a1);
                a2 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 16), a2);
                a3 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 24), a3);
                a4 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 32), a4);
                a5 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 40), a5);
                a6 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 48), a6);
                a7 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 56), a7);
            }
        }
        _mm256_storeu_ps(out + c, a0);
        _mm256_storeu_ps(out + c + 8, a1);
        _mm256_storeu_ps(out + c + 16, a2);
        _mm256_storeu_ps(out + c + 24, a3);
        _mm256_storeu_ps(out + c + 32, a4);
        _mm256_storeu_ps(out + c + 40, a5);
        _mm256_storeu_ps(out + c + 48, a6);
        _mm256_storeu_ps(out + c + 56, a7);
    }
    for (; c < d; c += 16) {
        // Four independent sums of 16 columns each, positions in turn.
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, b0 = a0, b1 = a0;
        for (j = 0; j + 2 <= n; j += 2) {
            __m256 p = _mm256_broadcast_ss(scores + j), r = _mm256_broadcast_ss(scores + j + 1);
            if (v16) {
                const uint16_t *v = v16 + (size_t)j * d + c;
                a0 = _mm256_fmadd_ps(p, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)v)), a0);
                a1 = _mm256_fmadd_ps(p, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(v + 8))), a1);
                b0 = _mm256_fmadd_ps(r, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(v + d))), b0);
                b1 = _mm256_fmadd_ps(r, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(v + d + 8))), b1);
            } else {
                const float *v = v32 + (size_t)j * d + c;
                a0 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v), a0);
                a1 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 8), a1);
                b0 = _mm256_fmadd_ps(r, _mm256_loadu_ps(v + d), b0);
                b1 = _mm256_fmadd_ps(r, _mm256_loadu_ps(v + d + 8), b1);
            }
        }
        for (; j < n; j++) {
            __m256 p = _mm256_broadcast_ss(scores + j);
            if (v16) {
                const uint16_t *v = v16 + (size_t)j * d + c;
                a0 = _mm256_fmadd_ps(p, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)v)), a0);
                a1 = _mm256_fmadd_ps(p, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(v + 8))), a1);
            } else {
                const float *v = v32 + (size_t)j * d + c;
                a0 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v), a0);
                a1 = _mm256_fmadd_ps(p, _mm256_loadu_ps(v + 8), a1);
            }
        }
        _mm256_storeu_ps(out + c, _mm256_add_ps(a0, b0));
        _mm256_storeu_ps(out + c + 8, _mm256_add_ps(a1, b1));
    }
#else
    for (int c = 0; c < d; c++) {
        out[c] = 0;
    }
    for (j = 0; j < n; j++) {
        float row[d];
        if (v16) {
            widen(v16 + (size_t)j * d, row, d);
        } else {
            memcpy(row, v32 + (size_t)j * d, d * sizeof(float));
        }
        for (int c = 0; c < d; c++) {
            out[c] += scores[j] * row[c];
        }
    }
#endif
    if (f16) {
        round16(out, d); // the output projection's F16 product reads it so
    }
}

// ---- The decoder.

typedef struct {
    int N, K;
    uint16_t *w16; // [N × K], or NULL
    float *w32;
    float *b; // N, or NULL
} lin;

typedef struct {
    float *g, *b;
} lnorm;

typedef struct {
    lnorm ln[3];
    lin p[8];
} layer;

struct boxd_dec {
    int S, H, d, L, V, T, A, slots, beams, f16, F;
    size_t es; // bytes a cache value
    float eps;
    layer *layers;
    lnorm ln;
    lin emb; // the token embedding, [V × S]
    float *pos;
    char *ck, *cv, *sk, *sv; // caches
    int *audio;              // per slot, its window's positions
    pool *pool;
    // Scratch for rows rows.
    int rows;
    float *x, *h, *q, *k, *v, *att, *f, *tmp, *scores;
};

static void linFree(lin *l) {
    free(l->w16), free(l->w32), free(l->b);
    memset(l, 0, sizeof *l);
}

void boxd_dec_free(boxd_dec *D) {
    if (!D) {
        return;
    }
    poolFree(D->pool);
    if (D->layers) {
        for (int l = 0; l < D->L; l++) {
            for (int i = 0; i < 8; i++) {
                linFree(&D->layers[l].p[i]);
            }
            for (int i = 0; i < 3; i++) {
                free(D->layers[l].ln[i].g), free(D->layers[l].ln[i].b);
            }
        }
    }
    free(D->layers);
    free(D->ln.g), free(D->ln.b);
    linFree(&D->emb);
    free(D->pos), free(D->ck), free(D->cv), free(D->sk), free(D->sv), free(D->audio);
    free(D->x), free(D->h), free(D->q), free(D->k), free(D->v), free(D->att), free(D->f), free(D->tmp), free(D->scores);
    free(D);
}

boxd_dec *boxd_dec_new(int S, int H, int L, int V, int T, int A, int slots, int beams, int f16, float eps, int threads) {
    if (S <= 0 || H <= 0 || S % H != 0 || (S / H) % 16 != 0 || L <= 0 || V <= 0 || T <= 0 || A <= 0 || slots <= 0 || beams <= 0) {
        return NULL;
    }
    boxd_dec *D = calloc(1, sizeof *D);
    if (!D) {
        return NULL;
    }
    D->S = S, D->H = H, D->d = S / H, D->L = L, D->V = V, D->T = T, D->A = A, D->slots = slots, D->beams = beams;
    D->f16 = f16 != 0, D->es = f16 ? 2 : 4, D->eps = eps;
    D->layers = calloc(L, sizeof *D->layers);
    D->pos = calloc((size_t)T * S, sizeof(float));
    D->audio = calloc(slots, sizeof(int));
    size_t cross = (size_t)L * slots * A * S * D->es, self = (size_t)L * slots * beams * T * S * D->es;
    D->ck = calloc(1, cross), D->cv = calloc(1, cross), D->sk = calloc(1, self), D->sv = calloc(1, self);
    D->pool = poolNew(threads);
    if (!D->layers || !D->pos || !D->audio || !D->ck || !D->cv || !D->sk || !D->sv || !D->pool) {
        boxd_dec_free(D);
        return NULL;
    }
    return D;
}

static int linSet(lin *l, int f16, const float *w, const float *b, int N, int K) {
    linFree(l);
    l->N = N, l->K = K;
    if (f16) {
        l->w16 = malloc((size_t)N * K * 2);
        if (l->w16) {
            boxd_f32_to_f16(w, l->w16, (long)N * K);
        }
    } else {
        l->w32 = malloc((size_t)N * K * 4);
        if (l->w32) {
            memcpy(l->w32, w, (size_t)N * K * 4);
        }
    }
    if (b) {
        l->b = malloc((size_t)N * 4);
        if (l->b) {
            memcpy(l->b, b, (size_t)N * 4);
        }
    }
    return (!l->w16 && !l->w32) || (b && !l->b) ? -1 : 0;
}

int boxd_dec_set_linear(boxd_dec *D, int layer, int which, const float *w, const float *b, int N, int K) {
    int S = D->S;
    if (layer < 0 || layer >= D->L || which < 0 || which > BOXD_DEC_FC2 || K % 16 != 0 || N % 16 != 0) {
        return -1;
    }
    switch (which) {
    case BOXD_DEC_FC1:
        if (K != S || (D->F && N != D->F)) {
            return -1;
        }
        D->F = N;
        break;
    case BOXD_DEC_FC2:
        if (N != S || (D->F && K != D->F)) {
            return -1;
        }
        D->F = K;
        break;
    default:
        if (N != S || K != S) {
            return -1;
        }
    }
    return linSet(&D->layers[layer].p[which], D->f16, w, b, N, K);
}

int boxd_dec_set_norm(boxd_dec *D, int layer, int which, const float *g, const float *b) {
    if (layer < -1 || layer >= D->L || which < 0 || which > BOXD_DEC_LN_MLP) {
        return -1;
    }
    lnorm *n = layer < 0 ? &D->ln : &D->layers[layer].ln[which];
    free(n->g), free(n->b);
    n->g = malloc((size_t)D->S * 4), n->b = malloc((size_t)D->S * 4);
    if (!n->g || !n->b) {
        return -1;
    }
    memcpy(n->g, g, (size_t)D->S * 4), memcpy(n->b, b, (size_t)D->S * 4);
    return 0;
}

int boxd_dec_set_embedding(boxd_dec *D, const float *emb, const float *pos) {
    memcpy(D->pos, pos, (size_t)D->T * D->S * 4);
    return linSet(&D->emb, D->f16, emb, NULL, D->V, D->S);
}

// ready says whether every weight is set (a forward before would read
// through NULL).
static int ready(const boxd_dec *D) {
    if (!D->emb.w16 && !D->emb.w32) {
        return 0;
    }
    if (!D->ln.g) {
        return 0;
    }
    for (int l = 0; l < D->L; l++) {
        for (int i = 0; i < 8; i++) {
            if (!D->layers[l].p[i].w16 && !D->layers[l].p[i].w32) {
                return 0;
            }
        }
        for (int i = 0; i < 3; i++) {
            if (!D->layers[l].ln[i].g) {
                return 0;
            }
        }
    }
    return 1;
}

// Cache addresses: cross keys and values of layer l, slot s, head h are
// [A × d]; a sequence's self-attention keys and values [T × d].
static char *crossAt(const boxd_dec *D, char *c, int l, int s, int h) {
    return c + ((((size_t)l * D->slots + s) * D->H + h) * D->A) * D->d * D->es;
}

static char *selfAt(const boxd_dec *D, char *c, int l, int s, int b, int h) {
    return c + (((((size_t)l * D->slots + s) * D->beams + b) * D->H + h) * D->T) * D->d * D->es;
}

// store writes d floats as a cache row.
static void store(const boxd_dec *D, char *dst, const float *x) {
    if (D->f16) {
        boxd_f32_to_f16(x, (uint16_t *)dst, D->d);
    } else {
        memcpy(dst, x, (size_t)D->d * 4);
    }
}

void boxd_dec_set_cross(boxd_dec *D, int slot, int layer, const float *k, const float *v, int A) {
    if (A > D->A) {
        A = D->A;
    }
    for (int h = 0; h < D->H; h++) {
        char *kd = crossAt(D, D->ck, layer, slot, h), *vd = crossAt(D, D->cv, layer, slot, h);
        for (int j = 0; j < A; j++) {
            store(D, kd + (size_t)j * D->d * D->es, k + (size_t)j * D->S + (size_t)h * D->d);
            store(D, vd + (size_t)j * D->d * D->es, v + (size_t)j * D->S + (size_t)h * D->d);
        }
    }
    D->audio[slot] = A;
}

int boxd_dec_reorder(boxd_dec *D, int slot, const int32_t *parents, int B, int past) {
    if (B > D->beams || past > D->T || past <= 0) {
        return past == 0 ? 0 : -1;
    }
    size_t row = (size_t)past * D->d * D->es;
    char *tmp = malloc((size_t)B * D->H * row);
    if (!tmp) {
        return -1;
    }
    for (int l = 0; l < D->L; l++) {
        for (int c = 0; c < 2; c++) {
            char *cache = c ? D->sv : D->sk;
            // A sequence that keeps its own caches is neither read nor
            // written (beams mostly do); every source is read before any
            // sequence is written.
            for (int i = 0; i < B; i++) {
                if (parents[i] == i) {
                    continue;
                }
                for (int h = 0; h < D->H; h++) {
                    memcpy(tmp + ((size_t)i * D->H + h) * row, selfAt(D, cache, l, slot, parents[i], h), row);
                }
            }
            for (int i = 0; i < B; i++) {
                if (parents[i] == i) {
                    continue;
                }
                for (int h = 0; h < D->H; h++) {
                    memcpy(selfAt(D, cache, l, slot, i, h), tmp + ((size_t)i * D->H + h) * row, row);
                }
            }
        }
    }
    free(tmp);
    return 0;
}

// grow makes the scratch hold M rows.
static int grow(boxd_dec *D, int M) {
    if (M <= D->rows) {
        return 0;
    }
    size_t S = D->S, F = D->F;
    float **bufs[] = {&D->x, &D->h, &D->q, &D->k, &D->v, &D->att, &D->tmp};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        free(*bufs[i]);
        *bufs[i] = malloc((size_t)M * S * 4);
    }
    free(D->f);
    D->f = malloc((size_t)M * F * 4);
    if (!D->scores) {
        int n = D->A > D->T ? D->A : D->T;
        D->scores = malloc((size_t)D->pool->n * n * 4);
    }
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) {
        if (!*bufs[i]) {
            D->rows = 0;
            return -1;
        }
    }
    if (!D->f || !D->scores) {
        D->rows = 0;
        return -1;
    }
    D->rows = M;
    return 0;
}

typedef struct {
    boxd_dec *D;
    int M;
    const int32_t *tok, *slot, *seq, *pos;
    int nwant;
    const int32_t *want;
    float *logits;
} job;

// part is thread t's share of N outputs: a multiple of 8 wide.
static void part(int N, int t, int nt, int *n0, int *n1) {
    int per = ((N + nt - 1) / nt + 7) / 8 * 8;
    *n0 = t * per < N ? t * per : N;
    *n1 = (t + 1) * per < N ? (t + 1) * per : N;
}

// Epilogues of project.
enum { SET, GELU, ADD };

// project computes outputs n0..n1 of l over M rows of in: into out
// (rounded to F16 with F16 weights, as the next product reads them), or
// with ADD added to out (the residual stream).
static void project(const boxd_dec *D, const lin *l, const float *in, int M, float *out, float *tmp, int n0, int n1, int mode, int rnd) {
    if (n0 >= n1) {
        return;
    }
    int N = l->N;
    float *y = mode == ADD ? tmp : out;
    boxd_logits(l->w16, l->w32, l->K, in, M, y, N, n0, n1);
    for (int r = 0; r < M; r++) {
        float *yr = y + (size_t)r * N, *orow = out + (size_t)r * N;
        for (int n = n0; n < n1; n++) {
            float v = yr[n] + (l->b ? l->b[n] : 0.0f);
            switch (mode) {
            case GELU:
                orow[n] = gelu(v);
                break;
            case ADD:
                orow[n] += v;
                break;
            default:
                orow[n] = v;
            }
        }
        if (rnd && D->f16 && mode != ADD) {
            round16(orow + n0, n1 - n0);
        }
    }
}

// norms writes thread t's share of the layer norms of x's rows (rows, or
// want[0..M) of them) into h, rounded for the F16 products that read it.
static void norms(const boxd_dec *D, const lnorm *n, int M, const int32_t *want, int t, int nt) {
    int i0 = (int)((long)M * t / nt), i1 = (int)((long)M * (t + 1) / nt);
    for (int i = i0; i < i1; i++) {
        int r = want ? want[i] : i;
        float *h = D->h + (size_t)i * D->S;
        boxd_layernorm_rows(D->x + (size_t)r * D->S, D->S, n->g, n->b, D->eps, h, 0, 1);
        if (D->f16) {
            round16(h, D->S);
        }
    }
}

static void run(void *arg, int t, int nt) {
    job *j = arg;
    boxd_dec *D = j->D;
    pool *P = D->pool;
    const int M = j->M, S = D->S, H = D->H, d = D->d;
    const float scale = 1.0f / sqrtf((float)d);
    float *scores = D->scores + (size_t)t * (D->A > D->T ? D->A : D->T);
    int n0, n1, f0, f1;
    part(S, t, nt, &n0, &n1);
    part(D->F, t, nt, &f0, &f1);
    for (int r = t; r < M; r += nt) {
        float *x = D->x + (size_t)r * S;
        if (D->emb.w16) {
            widen(D->emb.w16 + (size_t)j->tok[r] * S, x, S);
        } else {
            memcpy(x, D->emb.w32 + (size_t)j->tok[r] * S, (size_t)S * 4);
        }
        const float *p = D->pos + (size_t)j->pos[r] * S;
        for (int c = 0; c < S; c++) {
            x[c] += p[c];
        }
    }
    barrier(P);
    for (int l = 0; l < D->L; l++) {
        const layer *Ly = &D->layers[l];
        // Self attention.
        norms(D, &Ly->ln[BOXD_DEC_LN_ATTN], M, NULL, t, nt);
        barrier(P);
        project(D, &Ly->p[BOXD_DEC_Q], D->h, M, D->q, NULL, n0, n1, SET, 1);
        project(D, &Ly->p[BOXD_DEC_K], D->h, M, D->k, NULL, n0, n1, SET, 0);
        project(D, &Ly->p[BOXD_DEC_V], D->h, M, D->v, NULL, n0, n1, SET, 0);
        barrier(P);
        for (int h = t; h < H; h += nt) {
            for (int r = 0; r < M; r++) {
                size_t at = (size_t)j->pos[r] * d * D->es;
                store(D, selfAt(D, D->sk, l, j->slot[r], j->seq[r], h) + at, D->k + (size_t)r * S + (size_t)h * d);
                store(D, selfAt(D, D->sv, l, j->slot[r], j->seq[r], h) + at, D->v + (size_t)r * S + (size_t)h * d);
            }
            for (int r = 0; r < M; r++) {
                float *o = D->att + (size_t)r * S + (size_t)h * d;
                attend(selfAt(D, D->sk, l, j->slot[r], j->seq[r], h), selfAt(D, D->sv, l, j->slot[r], j->seq[r], h), D->f16, j->pos[r] + 1, d,
                       D->q + (size_t)r * S + (size_t)h * d, scale, scores, o);
            }
        }
        barrier(P);
        project(D, &Ly->p[BOXD_DEC_O], D->att, M, D->x, D->tmp, n0, n1, ADD, 0);
        barrier(P);
        // Cross attention.
        norms(D, &Ly->ln[BOXD_DEC_LN_CROSS], M, NULL, t, nt);
        barrier(P);
        project(D, &Ly->p[BOXD_DEC_CQ], D->h, M, D->q, NULL, n0, n1, SET, 1);
        barrier(P);
        for (int h = t; h < H; h += nt) {
            for (int r = 0; r < M; r++) {
                int s = j->slot[r];
                float *o = D->att + (size_t)r * S + (size_t)h * d;
                attend(crossAt(D, D->ck, l, s, h), crossAt(D, D->cv, l, s, h), D->f16, D->audio[s], d, D->q + (size_t)r * S + (size_t)h * d, scale,
                       scores, o);
            }
        }
        barrier(P);
        project(D, &Ly->p[BOXD_DEC_CO], D->att, M, D->x, D->tmp, n0, n1, ADD, 0);
        barrier(P);
        // MLP.
        norms(D, &Ly->ln[BOXD_DEC_LN_MLP], M, NULL, t, nt);
        barrier(P);
        project(D, &Ly->p[BOXD_DEC_FC1], D->h, M, D->f, NULL, f0, f1, GELU, 1);
        barrier(P);
        project(D, &Ly->p[BOXD_DEC_FC2], D->f, M, D->x, D->tmp, n0, n1, ADD, 0);
        barrier(P);
    }
    norms(D, &D->ln, j->nwant, j->want, t, nt);
    barrier(P);
    int v0, v1;
    part(D->V, t, nt, &v0, &v1);
    if (v0 < v1) {
        boxd_logits(D->emb.w16, D->emb.w32, S, D->h, j->nwant, j->logits, D->V, v0, v1);
    }
}

int boxd_dec_forward(boxd_dec *D, int M, const int32_t *tok, const int32_t *slot, const int32_t *seq, const int32_t *pos, int nwant,
                     const int32_t *want, float *logits) {
    if (!ready(D)) {
        return -2;
    }
    if (grow(D, M) != 0) {
        return -1;
    }
    job j = {D, M, tok, slot, seq, pos, nwant, want, logits};
    poolRun(D->pool, run, &j);
    return 0;
}
