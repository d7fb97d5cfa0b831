// launch_study.cuh: the launch study's kernel (not generated code): see
// tessera_cuda::launch_study and `tessera bench launches`. It takes as many 64-bit
// parameters as a generated pipeline kernel typically does (SSB's take 15-30) and does
// almost nothing, so that what is timed is queueing and launching it. Its one write adds
// the parameters' sum to out[0], so that the host can check every launch ran. Not
// included by tessera.cuh.
#pragma once

extern "C" __global__ void tessera_launch_study(long long p0, long long p1, long long p2, long long p3, long long p4, long long p5, long long p6, long long p7, long long p8, long long p9, long long p10, long long p11, long long p12, long long p13, long long p14, long long p15, long long p16, long long p17, long long p18, long long p19, long long p20, long long p21, long long p22, long long p23, unsigned long long* out) {
    if (blockIdx.x == 0 && threadIdx.x == 0) out[0] += (unsigned long long)(p0 + p1 + p2 + p3 + p4 + p5 + p6 + p7 + p8 + p9 + p10 + p11 + p12 + p13 + p14 + p15 + p16 + p17 + p18 + p19 + p20 + p21 + p22 + p23);
}
