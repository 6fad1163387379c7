; attention 1x1x24x16 causal (fast): o[b,h] = softmax(q[b,h]·k[b,h]ᵀ/√16 + causal mask)·v[b,h]
; schedule: naive · tile q=16,kv=32,k0=16,r=8 · depth 2 · 1 core
; compiled by dsasim (the naive schedule: one tile-language kernel in three phases) for edu
.chip edu
.tensor q f16[1,1,24,16] in
.tensor k f16[1,1,24,16] in
.tensor v f16[1,1,24,16] in
.tensor o f16[1,1,24,16] out
.tensor s f16[1,1,24,24] scratch
.tensor p f16[1,1,24,24] scratch
.core 0
    mte2.copy   l1[0x0000], q[0x0000], f16[16,16]
    set_flag    mte2 -> mte1, 2
    mte2.copy   l1[0x0200], q[0x0200], f16[8,16]
    set_flag    mte2 -> mte1, 3
    mte2.copy   l1[0x0400], k[0x0000], f16[24,16]
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x0800], k[0x0000], f16[24,16]
    wait_flag   mte2 -> mte1, 2
    mte1.copy   l0a[0x0000], l1[0x0000], f16[16,16]
    set_flag    mte2 -> mte1, 1
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0b[0x0000], l1[0x0400], f16[24,16], transpose
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=16, k=16, n=24, init
    wait_flag   mte2 -> mte1, 3
    mte1.copy   l0a[0x0200], l1[0x0200], f16[8,16]
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     s[0x0000], l0c[0x0000], f32[16,24], to=f16, scale=0.25
    wait_flag   mte2 -> mte1, 1
    mte1.copy   l0b[0x0400], l1[0x0800], f16[24,16], transpose
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0800], l0a[0x0200], l0b[0x0400], f16, m=8, k=16, n=24, init
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     s[0x0300], l0c[0x0800], f32[8,24], to=f16, scale=0.25
    barrier     all
    mte2.copy   ub[0x0000], s[0x0000], f16[8,24]
    set_flag    mte2 -> v, 0
    mte2.copy   ub[0x0180], s[0x0180], f16[8,24]
    set_flag    mte2 -> v, 1
    wait_flag   mte2 -> v, 0
    v.tril      ub[0x0900], ub[0x0000], -inf, f16[8,24], diag=0
    v.rowmax    ub[0x0780], ub[0x0900], f16[8,24]
    v.rowbcast  ub[0x0600], ub[0x0780], f16[8,24]
    v.sub       ub[0x0900], ub[0x0900], ub[0x0600], f16[8,24]
    v.exp       ub[0x0900], ub[0x0900], f16[8,24]
    v.cast      ub[0x0600], ub[0x0900], f16[8,24], to=f32
    v.rowsum    ub[0x0a80], ub[0x0600], f32[8,24]
    v.recip     ub[0x0a80], ub[0x0a80], f32[8]
    v.cast      ub[0x0780], ub[0x0a80], f32[8], to=f16
    v.rowbcast  ub[0x0600], ub[0x0780], f16[8,24]
    v.mul       ub[0x0300], ub[0x0900], ub[0x0600], f16[8,24]
    set_flag    v -> mte2, 0
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], s[0x0300], f16[8,24]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   p[0x0000], ub[0x0300], f16[8,24]
    wait_flag   mte2 -> v, 1
    v.tril      ub[0x0900], ub[0x0180], -inf, f16[8,24], diag=8
    v.rowmax    ub[0x0780], ub[0x0900], f16[8,24]
    set_flag    mte2 -> v, 0
    set_flag    mte3 -> v, 0
    v.rowbcast  ub[0x0600], ub[0x0780], f16[8,24]
    v.sub       ub[0x0900], ub[0x0900], ub[0x0600], f16[8,24]
    v.exp       ub[0x0900], ub[0x0900], f16[8,24]
    v.cast      ub[0x0600], ub[0x0900], f16[8,24], to=f32
    v.rowsum    ub[0x0a80], ub[0x0600], f32[8,24]
    v.recip     ub[0x0a80], ub[0x0a80], f32[8]
    v.cast      ub[0x0780], ub[0x0a80], f32[8], to=f16
    v.rowbcast  ub[0x0600], ub[0x0780], f16[8,24]
    v.mul       ub[0x0480], ub[0x0900], ub[0x0600], f16[8,24]
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   p[0x0180], ub[0x0480], f16[8,24]
    wait_flag   mte2 -> v, 0
    wait_flag   mte3 -> v, 0
    v.tril      ub[0x0900], ub[0x0000], -inf, f16[8,24], diag=16
    v.rowmax    ub[0x0780], ub[0x0900], f16[8,24]
    v.rowbcast  ub[0x0600], ub[0x0780], f16[8,24]
    v.sub       ub[0x0900], ub[0x0900], ub[0x0600], f16[8,24]
    v.exp       ub[0x0900], ub[0x0900], f16[8,24]
    v.cast      ub[0x0600], ub[0x0900], f16[8,24], to=f32
    v.rowsum    ub[0x0a80], ub[0x0600], f32[8,24]
    v.recip     ub[0x0a80], ub[0x0a80], f32[8]
    v.cast      ub[0x0780], ub[0x0a80], f32[8], to=f16
    v.rowbcast  ub[0x0600], ub[0x0780], f16[8,24]
    v.mul       ub[0x0300], ub[0x0900], ub[0x0600], f16[8,24]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   p[0x0300], ub[0x0300], f16[8,24]
    barrier     all
    mte2.copy   l1[0x0000], p[0x0000], f16[16,24], dst_stride=32
    mte2.copy   l1[0x0800], v[0x0000], f16[24,16]
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x0400], p[0x0300], f16[8,24], dst_stride=32
    mte2.copy   l1[0x0c00], v[0x0000], f16[24,16]
    set_flag    mte2 -> mte1, 1
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[16,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x0800], f16[16,16]
    set_flag    mte1 -> cube, 0
    mte1.copy   l0a[0x0200], l1[0x0020], f16[16,8], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=16, k=16, n=16, init
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0200], l1[0x0a00], f16[8,16]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0200], l0b[0x0200], f16, m=16, k=8, n=16
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     o[0x0000], l0c[0x0000], f32[16,16], to=f16
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0400], f16[8,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x0c00], f16[16,16]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0200], l1[0x0420], f16[8,8], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0400], l0a[0x0000], l0b[0x0000], f16, m=8, k=16, n=16, init
    mte1.copy   l0b[0x0200], l1[0x0e00], f16[8,16]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0400], l0a[0x0200], l0b[0x0200], f16, m=8, k=8, n=16
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     o[0x0200], l0c[0x0400], f32[8,16], to=f16
