; rmsnorm 20x300: y[r,c] = x[r,c] / sqrt(mean_c x[r,:]² + 1e-06) · gamma[c]
; schedule: tile r=8,c=300 · order r,c · buffers 2 · prefetch 1 · 2 cores · parallel r
; compiled by dsasim for chip edu; GM traffic 25,200 B expected
.chip edu
.tensor x f16[20,300] in
.tensor gamma f16[300] in
.tensor y f16[20,300] out
.core 0
    mte2.copy   ub[0x2580], gamma[0x0000], f16[300]
    set_flag    mte2 -> v, 2
    mte2.copy   ub[0x0000], x[0x0000], f16[8,300]
    wait_flag   mte2 -> v, 2
    set_flag    mte2 -> v, 0
    mte2.copy   ub[0x12c0], x[0x12c0], f16[8,300]
    wait_flag   mte2 -> v, 0
    v.cast      ub[0x4d60], ub[0x0000], f16[8,300], to=f32
    set_flag    mte2 -> v, 1
    v.mul       ub[0x4d60], ub[0x4d60], ub[0x4d60], f32[8,300]
    v.rowsum    ub[0x72e0], ub[0x4d60], f32[8,300]
    v.muls      ub[0x72e0], ub[0x72e0], 0.0033333333333333335, f32[8]
    v.adds      ub[0x72e0], ub[0x72e0], 1e-06, f32[8]
    v.rsqrt     ub[0x72e0], ub[0x72e0], f32[8]
    v.cast      ub[0x6020], ub[0x72e0], f32[8], to=f16
    v.rowbcast  ub[0x4d60], ub[0x6020], f16[8,300]
    v.mul       ub[0x4d60], ub[0x0000], ub[0x4d60], f16[8,300]
    v.mul       ub[0x27e0], ub[0x4d60], ub[0x2580], f16[8,300], src1_stride=0
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0000], ub[0x27e0], f16[8,300]
    wait_flag   mte2 -> v, 1
    v.cast      ub[0x4d60], ub[0x12c0], f16[8,300], to=f32
    v.mul       ub[0x4d60], ub[0x4d60], ub[0x4d60], f32[8,300]
    v.rowsum    ub[0x72e0], ub[0x4d60], f32[8,300]
    v.muls      ub[0x72e0], ub[0x72e0], 0.0033333333333333335, f32[8]
    v.adds      ub[0x72e0], ub[0x72e0], 1e-06, f32[8]
    v.rsqrt     ub[0x72e0], ub[0x72e0], f32[8]
    v.cast      ub[0x6020], ub[0x72e0], f32[8], to=f16
    v.rowbcast  ub[0x4d60], ub[0x6020], f16[8,300]
    v.mul       ub[0x4d60], ub[0x12c0], ub[0x4d60], f16[8,300]
    v.mul       ub[0x3aa0], ub[0x4d60], ub[0x2580], f16[8,300], src1_stride=0
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   y[0x12c0], ub[0x3aa0], f16[8,300]
.core 1
    mte2.copy   ub[0x2580], gamma[0x0000], f16[300]
    set_flag    mte2 -> v, 2
    mte2.copy   ub[0x0000], x[0x2580], f16[4,300]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 2
    wait_flag   mte2 -> v, 0
    v.cast      ub[0x4d60], ub[0x0000], f16[4,300], to=f32
    v.mul       ub[0x4d60], ub[0x4d60], ub[0x4d60], f32[4,300]
    v.rowsum    ub[0x72e0], ub[0x4d60], f32[4,300]
    v.muls      ub[0x72e0], ub[0x72e0], 0.0033333333333333335, f32[4]
    v.adds      ub[0x72e0], ub[0x72e0], 1e-06, f32[4]
    v.rsqrt     ub[0x72e0], ub[0x72e0], f32[4]
    v.cast      ub[0x6020], ub[0x72e0], f32[4], to=f16
    v.rowbcast  ub[0x4d60], ub[0x6020], f16[4,300]
    v.mul       ub[0x4d60], ub[0x0000], ub[0x4d60], f16[4,300]
    v.mul       ub[0x27e0], ub[0x4d60], ub[0x2580], f16[4,300], src1_stride=0
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x2580], ub[0x27e0], f16[4,300]
