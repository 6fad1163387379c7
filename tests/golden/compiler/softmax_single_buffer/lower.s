; softmax 9x100: y[r,c] = exp(x[r,c] - max_c x[r,:]) / Σ_c exp(x[r,c] - max_c x[r,:])
; schedule: tile r=4,c=100 · order r,c · buffers 1 · prefetch 0 · 1 core
; compiled by dsasim for chip edu; GM traffic 3,600 B expected
.chip edu
.tensor x f16[9,100] in
.tensor y f16[9,100] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f16[4,100]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.cast      ub[0x0640], ub[0x0000], f16[4,100], to=f32
    v.rowmax    ub[0x1640], ub[0x0640], f32[4,100]
    v.rowbcast  ub[0x0c80], ub[0x1640], f32[4,100]
    v.sub       ub[0x0640], ub[0x0640], ub[0x0c80], f32[4,100]
    v.exp       ub[0x0640], ub[0x0640], f32[4,100]
    v.rowsum    ub[0x0c80], ub[0x0640], f32[4,100]
    v.recip     ub[0x12c0], ub[0x0c80], f32[4]
    v.rowbcast  ub[0x0c80], ub[0x12c0], f32[4,100]
    v.mul       ub[0x0640], ub[0x0640], ub[0x0c80], f32[4,100]
    v.cast      ub[0x0320], ub[0x0640], f32[4,100], to=f16
    set_flag    v -> mte2, 0
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0000], ub[0x0320], f16[4,100]
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0x0320], f16[4,100]
    set_flag    mte3 -> v, 0
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    wait_flag   mte3 -> v, 0
    v.cast      ub[0x0640], ub[0x0000], f16[4,100], to=f32
    v.rowmax    ub[0x1640], ub[0x0640], f32[4,100]
    v.rowbcast  ub[0x0c80], ub[0x1640], f32[4,100]
    v.sub       ub[0x0640], ub[0x0640], ub[0x0c80], f32[4,100]
    v.exp       ub[0x0640], ub[0x0640], f32[4,100]
    v.rowsum    ub[0x0c80], ub[0x0640], f32[4,100]
    v.recip     ub[0x12c0], ub[0x0c80], f32[4]
    v.rowbcast  ub[0x0c80], ub[0x12c0], f32[4,100]
    v.mul       ub[0x0640], ub[0x0640], ub[0x0c80], f32[4,100]
    v.cast      ub[0x0320], ub[0x0640], f32[4,100], to=f16
    set_flag    v -> mte2, 0
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0320], ub[0x0320], f16[4,100]
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0x0640], f16[100]
    set_flag    mte2 -> v, 0
    set_flag    mte3 -> v, 0
    wait_flag   mte2 -> v, 0
    wait_flag   mte3 -> v, 0
    v.cast      ub[0x0640], ub[0x0000], f16[100], to=f32
    v.rowmax    ub[0x1640], ub[0x0640], f32[100]
    v.rowbcast  ub[0x0c80], ub[0x1640], f32[100]
    v.sub       ub[0x0640], ub[0x0640], ub[0x0c80], f32[100]
    v.exp       ub[0x0640], ub[0x0640], f32[100]
    v.rowsum    ub[0x0c80], ub[0x0640], f32[100]
    v.recip     ub[0x12c0], ub[0x0c80], f32[1]
    v.rowbcast  ub[0x0c80], ub[0x12c0], f32[100]
    v.mul       ub[0x0640], ub[0x0640], ub[0x0c80], f32[100]
    v.cast      ub[0x0320], ub[0x0640], f32[100], to=f16
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0640], ub[0x0320], f16[100]
