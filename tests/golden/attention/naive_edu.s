; attention 1x1x24x16 causal (fast): o[b,h] = softmax(q[b,h]·k[b,h]ᵀ/√16 + causal mask)·v[b,h]
; schedule: naive · tile q=16,kv=32,k0=16,r=8 · depth 2 · 1 core
; compiled by dsasim for chip edu; GM traffic 9,216 B expected
.chip edu
.tensor q f16[1,1,24,16] in
.tensor k f16[1,1,24,16] in
.tensor v f16[1,1,24,16] in
.tensor o f16[1,1,24,16] out
.tensor s f16[1,1,24,24] scratch
.tensor p f16[1,1,24,24] scratch
.core 0
    mte2.copy   l1[0x0000], q[0x0000], f16[16,16]
    set_flag    mte2 -> mte1, 0
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[16,16]
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mte2.copy   l1[0x0400], k[0x0000], f16[24,16]
    set_flag    mte2 -> mte1, 2
    wait_flag   mte2 -> mte1, 2
    mte1.copy   l0b[0x0000], l1[0x0400], f16[24,16], transpose
    set_flag    mte1 -> cube, 2
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=16, k=16, n=24, init
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     s[0x0000], l0c[0x0000], f32[16,24], to=f16, scale=0.25
    mte2.copy   l1[0x0200], q[0x0200], f16[8,16]
    set_flag    mte2 -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    mte1.copy   l0a[0x0200], l1[0x0200], f16[8,16]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mte2.copy   l1[0x0800], k[0x0000], f16[24,16]
    set_flag    mte2 -> mte1, 3
    wait_flag   mte2 -> mte1, 3
    mte1.copy   l0b[0x0400], l1[0x0800], f16[24,16], transpose
    set_flag    mte1 -> cube, 3
    wait_flag   mte1 -> cube, 3
    mmad        l0c[0x0800], l0a[0x0200], l0b[0x0400], f16, m=8, k=16, n=24, init
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     s[0x0300], l0c[0x0800], f32[8,24], to=f16, scale=0.25
    barrier     all
    mte2.copy   ub[0x0000], s[0x0000], f16[8,24], dst_stride=32
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.tril      ub[0x0000], ub[0x0000], -inf, f16[8,24], diag=0, dst_stride=32, src_stride=32
    v.rowmax    ub[0x0b00], ub[0x0000], f16[8,24], src_stride=32
    v.rowbcast  ub[0x0400], ub[0x0b00], f16[8,24], dst_stride=32
    v.sub       ub[0x0000], ub[0x0000], ub[0x0400], f16[8,24], dst_stride=32, src0_stride=32, src1_stride=32
    v.exp       ub[0x0000], ub[0x0000], f16[8,24], dst_stride=32, src_stride=32
    v.cast      ub[0x0600], ub[0x0000], f16[8,24], to=f32, src_stride=32
    v.rowsum    ub[0x0b20], ub[0x0600], f32[8,24]
    v.recip     ub[0x0b20], ub[0x0b20], f32[8]
    v.cast      ub[0x0b40], ub[0x0b20], f32[8], to=f16
    v.rowbcast  ub[0x0400], ub[0x0b40], f16[8,24], dst_stride=32
    v.mul       ub[0x0000], ub[0x0000], ub[0x0400], f16[8,24], dst_stride=32, src0_stride=32, src1_stride=32
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   p[0x0000], ub[0x0000], f16[8,24], src_stride=32
    set_flag    mte3 -> mte2, 0
    mte2.copy   ub[0x0200], s[0x0180], f16[8,24], dst_stride=32
    set_flag    mte2 -> v, 1
    wait_flag   mte2 -> v, 1
    v.tril      ub[0x0200], ub[0x0200], -inf, f16[8,24], diag=8, dst_stride=32, src_stride=32
    v.rowmax    ub[0x0b00], ub[0x0200], f16[8,24], src_stride=32
    v.rowbcast  ub[0x0400], ub[0x0b00], f16[8,24], dst_stride=32
    v.sub       ub[0x0200], ub[0x0200], ub[0x0400], f16[8,24], dst_stride=32, src0_stride=32, src1_stride=32
    v.exp       ub[0x0200], ub[0x0200], f16[8,24], dst_stride=32, src_stride=32
    v.cast      ub[0x0600], ub[0x0200], f16[8,24], to=f32, src_stride=32
    v.rowsum    ub[0x0b20], ub[0x0600], f32[8,24]
    v.recip     ub[0x0b20], ub[0x0b20], f32[8]
    v.cast      ub[0x0b40], ub[0x0b20], f32[8], to=f16
    v.rowbcast  ub[0x0400], ub[0x0b40], f16[8,24], dst_stride=32
    v.mul       ub[0x0200], ub[0x0200], ub[0x0400], f16[8,24], dst_stride=32, src0_stride=32, src1_stride=32
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   p[0x0180], ub[0x0200], f16[8,24], src_stride=32
    wait_flag   mte3 -> mte2, 0
    mte2.copy   ub[0x0000], s[0x0300], f16[8,24], dst_stride=32
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.tril      ub[0x0000], ub[0x0000], -inf, f16[8,24], diag=16, dst_stride=32, src_stride=32
    v.rowmax    ub[0x0b00], ub[0x0000], f16[8,24], src_stride=32
    v.rowbcast  ub[0x0400], ub[0x0b00], f16[8,24], dst_stride=32
    v.sub       ub[0x0000], ub[0x0000], ub[0x0400], f16[8,24], dst_stride=32, src0_stride=32, src1_stride=32
    v.exp       ub[0x0000], ub[0x0000], f16[8,24], dst_stride=32, src_stride=32
    v.cast      ub[0x0600], ub[0x0000], f16[8,24], to=f32, src_stride=32
    v.rowsum    ub[0x0b20], ub[0x0600], f32[8,24]
    v.recip     ub[0x0b20], ub[0x0b20], f32[8]
    v.cast      ub[0x0b40], ub[0x0b20], f32[8], to=f16
    v.rowbcast  ub[0x0400], ub[0x0b40], f16[8,24], dst_stride=32
    v.mul       ub[0x0000], ub[0x0000], ub[0x0400], f16[8,24], dst_stride=32, src0_stride=32, src1_stride=32
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   p[0x0300], ub[0x0000], f16[8,24], src_stride=32
    barrier     all
    mte2.copy   l1[0x0000], p[0x0000], f16[16,24]
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x0800], v[0x0000], f16[24,16]
    set_flag    mte2 -> mte1, 2
    wait_flag   mte2 -> mte1, 0
    wait_flag   mte2 -> mte1, 2
    mte1.copy   l0a[0x0000], l1[0x0000], f16[16,16], src_stride=24
    set_flag    mte1 -> cube, 0
    mte1.copy   l0b[0x0000], l1[0x0800], f16[16,16]
    set_flag    mte1 -> cube, 2
    wait_flag   mte1 -> cube, 0
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=16, k=16, n=16, init
    set_flag    cube -> mte1, 0
    set_flag    cube -> mte1, 2
    mte1.copy   l0a[0x0200], l1[0x0020], f16[16,8], src_stride=24
    set_flag    mte1 -> cube, 1
    mte1.copy   l0b[0x0200], l1[0x0a00], f16[8,16]
    set_flag    mte1 -> cube, 3
    wait_flag   mte1 -> cube, 1
    wait_flag   mte1 -> cube, 3
    mmad        l0c[0x0000], l0a[0x0200], l0b[0x0200], f16, m=16, k=8, n=16
    set_flag    cube -> mte1, 1
    set_flag    cube -> mte1, 3
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     o[0x0000], l0c[0x0000], f32[16,16], to=f16
    mte2.copy   l1[0x0400], p[0x0300], f16[8,24]
    set_flag    mte2 -> mte1, 1
    mte2.copy   l1[0x0c00], v[0x0000], f16[24,16]
    set_flag    mte2 -> mte1, 3
    wait_flag   mte2 -> mte1, 1
    wait_flag   mte2 -> mte1, 3
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0400], f16[8,16], src_stride=24
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 2
    mte1.copy   l0b[0x0000], l1[0x0c00], f16[16,16]
    set_flag    mte1 -> cube, 2
    wait_flag   mte1 -> cube, 0
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x0400], l0a[0x0000], l0b[0x0000], f16, m=8, k=16, n=16, init
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0200], l1[0x0420], f16[8,8], src_stride=24
    set_flag    mte1 -> cube, 1
    wait_flag   cube -> mte1, 3
    mte1.copy   l0b[0x0200], l1[0x0e00], f16[8,16]
    set_flag    mte1 -> cube, 3
    wait_flag   mte1 -> cube, 1
    wait_flag   mte1 -> cube, 3
    mmad        l0c[0x0400], l0a[0x0200], l0b[0x0200], f16, m=8, k=8, n=16
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     o[0x0200], l0c[0x0400], f32[8,16], to=f16
