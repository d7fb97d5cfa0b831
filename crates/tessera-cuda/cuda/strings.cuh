// strings.cuh: string functions of generated kernels over string columns without a
// dictionary, kept as Arrow keeps them: int64 offsets (rows + 1) into UTF-8 bytes.
// (Predicates over dictionary-encoded strings never reach the GPU as strings: the
// executor evaluates them over the dictionary and the kernel tests codes.)
#pragma once

namespace tessera {

// Matches pattern piece p[0, pl) (no '%'; '_' is any one UTF-8 character) against the
// bytes s[i, n) from i: the end of the match, or -1.
__device__ __forceinline__ long long tessera_like_piece(const unsigned char* s, long long i, long long n, const char* p, int pl) {
    for (int k = 0; k < pl; ++k) {
        if (i >= n) return -1;
        if (p[k] == '_') {
            ++i;
            while (i < n && (s[i] & 0xC0) == 0x80) ++i;
        } else {
            if (s[i] != (unsigned char)p[k]) return -1;
            ++i;
        }
    }
    return i;
}

// Whether piece p[0, pl) holds a '_' (its match then has no fixed byte length).
__device__ __forceinline__ bool tessera_like_has_any(const char* p, int pl) {
    for (int k = 0; k < pl; ++k) if (p[k] == '_') return true;
    return false;
}

// SQL LIKE without an escape character: row r of a string column (offsets `off`, bytes
// `bytes`) against pattern p[0, pl), where '%' is any sequence and '_' any one
// character. The pattern is split at '%' into pieces: the first must match at the start,
// the last at the end, and each one between at its leftmost place after the previous
// one (leftmost placement never loses a match that exists).
__device__ bool tessera_like(const long long* __restrict__ off, const unsigned char* __restrict__ bytes, long long r, const char* p, int pl) {
    long long i = off[r];
    const long long n = off[r + 1];
    int e = 0;
    while (e < pl && p[e] != '%') ++e;
    if (e == pl) return tessera_like_piece(bytes, i, n, p, pl) == n;
    i = tessera_like_piece(bytes, i, n, p, e);
    if (i < 0) return false;
    int k = e + 1;
    for (;;) {
        e = k;
        while (e < pl && p[e] != '%') ++e;
        const int len = e - k;
        if (e == pl) {
            // The last piece ends the string.
            if (len == 0) return true;
            if (!tessera_like_has_any(p + k, len)) {
                const long long t = n - len;
                return t >= i && tessera_like_piece(bytes, t, n, p + k, len) == n;
            }
            for (long long t = i; t < n; ++t) {
                if ((bytes[t] & 0xC0) == 0x80) continue;
                if (tessera_like_piece(bytes, t, n, p + k, len) == n) return true;
            }
            return false;
        }
        if (len > 0) {
            long long found = -1;
            for (long long t = i; t < n && found < 0; ++t) {
                if ((bytes[t] & 0xC0) == 0x80) continue;
                found = tessera_like_piece(bytes, t, n, p + k, len);
            }
            if (found < 0) return false;
            i = found;
        }
        k = e + 1;
    }
}

}  // namespace tessera
