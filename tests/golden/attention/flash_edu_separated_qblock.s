; attention 1x1x40x16 causal (fast): o[b,h] = softmax(q[b,h]·k[b,h]ᵀ/√16 + causal mask)·v[b,h]
; schedule: flash · tile q=16,qb=32,kv=32,k0=16 · depth 2 · 1 core
; compiled by dsasim for chip edu-separated; GM traffic 24,512 B expected
.chip edu-separated
.tensor q f16[1,1,40,16] in
.tensor k f16[1,1,40,16] in
.tensor v f16[1,1,40,16] in
.tensor o f16[1,1,40,16] out
.tensor ws_s f16[1,2,512] scratch
.tensor ws_p f16[1,2,512] scratch
.tensor ws_pv f32[1,5,272] scratch
.tensor ws_ones f16[1,16] scratch
.core 0
    mte2.copy   l1[0x0000], q[0x0000], f16[32,16]
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x0400], k[0x0000], f16[32,16]
    set_flag    mte2 -> mte1, 1
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0b[0x0000], l1[0x0000], f16[16,16], transpose
    set_flag    mte1 -> cube, 0
    wait_flag   mte2 -> mte1, 1
    wait_flag   mte1 -> cube, 0
    mte1.copy   l0a[0x0000], l1[0x0400], f16[32,16]
    set_flag    mte1 -> cube, 2
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=16, init
    set_flag    cube -> mte1, 2
    set_flag    cube -> mte1, 0
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     ws_s[0x0000], l0c[0x0000], f32[32,16], to=f16, scale=0.25
    set_cross   fix -> mte2, 0, core=1
    set_cross   fix -> mte2, 0, core=2
    set_flag    fix -> cube, 0
    mte1.copy   l0b[0x0200], l1[0x0200], f16[16,16], transpose
    set_flag    mte1 -> cube, 1
    set_flag    mte1 -> mte2, 0
    wait_flag   mte1 -> cube, 1
    mte1.copy   l0a[0x0400], l1[0x0400], f16[32,16]
    set_flag    mte1 -> cube, 3
    wait_flag   mte1 -> cube, 3
    mmad        l0c[0x0800], l0a[0x0400], l0b[0x0200], f16, m=32, k=16, n=16, init
    set_flag    cube -> mte1, 3
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     ws_s[0x0400], l0c[0x0800], f32[32,16], to=f16, scale=0.25
    set_cross   fix -> mte2, 0, core=1
    set_cross   fix -> mte2, 0, core=2
    set_flag    fix -> cube, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], q[0x0400], f16[8,16]
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x0800], k[0x0000], f16[32,16]
    set_flag    mte2 -> mte1, 2
    mte2.copy   l1[0x0c00], v[0x0000], f16[32,16]
    set_flag    mte2 -> mte1, 3
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0b[0x0000], l1[0x0000], f16[8,16], transpose
    set_flag    mte1 -> cube, 0
    wait_flag   mte2 -> mte1, 2
    wait_flag   fix -> cube, 0
    wait_flag   mte1 -> cube, 0
    wait_flag   cube -> mte1, 2
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16]
    set_flag    mte1 -> cube, 2
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=8, init
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    wait_cross  mte2 -> fix, 0, core=1
    wait_cross  mte2 -> fix, 0, core=2
    fixpipe     ws_s[0x0000], l0c[0x0000], f32[32,8], to=f16, scale=0.25
    set_cross   fix -> mte2, 0, core=1
    set_cross   fix -> mte2, 0, core=2
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0400], k[0x0400], f16[8,16]
    set_flag    mte2 -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   fix -> cube, 1
    wait_flag   cube -> mte1, 3
    mte1.copy   l0a[0x0400], l1[0x0400], f16[8,16]
    set_flag    mte1 -> cube, 3
    wait_flag   mte1 -> cube, 3
    mmad        l0c[0x0800], l0a[0x0400], l0b[0x0000], f16, m=8, k=16, n=8, init
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    wait_cross  mte2 -> fix, 0, core=1
    wait_cross  mte2 -> fix, 0, core=2
    fixpipe     ws_s[0x0400], l0c[0x0800], f32[8,8], to=f16, scale=0.25
    set_cross   fix -> mte2, 0, core=1
    set_cross   fix -> mte2, 0, core=2
    wait_cross  mte3 -> mte2, 1, core=1
    mte2.copy   l1[0x1c00], ws_ones[0x0000], f16[16]
    wait_cross  mte3 -> mte2, 0, core=1
    wait_cross  mte3 -> mte2, 0, core=2
    mte2.copy   l1[0x1400], ws_p[0x0000], f16[32,16]
    set_cross   mte2 -> mte3, 0, core=1
    set_cross   mte2 -> mte3, 0, core=2
    set_flag    mte2 -> mte1, 5
    wait_flag   mte2 -> mte1, 5
    mte1.copy   l0a[0x0c00], l1[0x1c00], f16[16]
    wait_flag   mte2 -> mte1, 3
    mte1.copy   l0a[0x0800], l1[0x0c00], f16[16,16], transpose
    set_flag    mte1 -> cube, 4
    mte1.copy   l0b[0x0400], l1[0x1400], f16[16,16]
    set_flag    mte1 -> cube, 6
    wait_flag   mte1 -> cube, 4
    wait_flag   mte1 -> cube, 6
    mmad        l0c[0x1000], l0a[0x0800], l0b[0x0400], f16, m=16, k=16, n=16, init
    mmad        l0c[0x1400], l0a[0x0c00], l0b[0x0400], f16, m=1, k=16, n=16, init
    set_flag    cube -> mte1, 4
    set_flag    cube -> mte1, 6
    mte1.copy   l0a[0x0a00], l1[0x0e00], f16[16,16], transpose
    set_flag    mte1 -> cube, 5
    mte1.copy   l0b[0x0600], l1[0x1600], f16[16,16]
    set_flag    mte1 -> cube, 7
    wait_flag   mte1 -> cube, 5
    wait_flag   mte1 -> cube, 7
    mmad        l0c[0x1000], l0a[0x0a00], l0b[0x0600], f16, m=16, k=16, n=16
    mmad        l0c[0x1400], l0a[0x0c00], l0b[0x0600], f16, m=1, k=16, n=16
    set_flag    cube -> mte1, 5
    set_flag    cube -> mte1, 7
    set_flag    mte1 -> mte2, 5
    set_flag    cube -> fix, 2
    wait_flag   cube -> fix, 2
    fixpipe     ws_pv[0x0000], l0c[0x1000], f32[16,16]
    fixpipe     ws_pv[0x0400], l0c[0x1400], f32[16]
    set_cross   fix -> mte2, 1, core=1
    set_cross   fix -> mte2, 1, core=2
    set_flag    fix -> cube, 2
    mte2.copy   l1[0x1000], v[0x0000], f16[32,16]
    set_flag    mte2 -> mte1, 4
    wait_cross  mte3 -> mte2, 0, core=1
    wait_cross  mte3 -> mte2, 0, core=2
    mte2.copy   l1[0x1800], ws_p[0x0400], f16[32,16]
    set_cross   mte2 -> mte3, 0, core=1
    set_cross   mte2 -> mte3, 0, core=2
    set_flag    mte2 -> mte1, 6
    wait_flag   mte2 -> mte1, 6
    wait_flag   fix -> cube, 2
    wait_flag   cube -> mte1, 4
    mte1.copy   l0a[0x0800], l1[0x0c00], f16[16,16], transpose
    set_flag    mte1 -> cube, 4
    wait_flag   cube -> mte1, 6
    mte1.copy   l0b[0x0400], l1[0x1800], f16[16,16]
    set_flag    mte1 -> cube, 6
    wait_flag   mte1 -> cube, 4
    wait_flag   mte1 -> cube, 6
    mmad        l0c[0x1000], l0a[0x0800], l0b[0x0400], f16, m=16, k=16, n=16, init
    mmad        l0c[0x1400], l0a[0x0c00], l0b[0x0400], f16, m=1, k=16, n=16, init
    set_flag    cube -> mte1, 4
    set_flag    cube -> mte1, 6
    wait_flag   cube -> mte1, 5
    mte1.copy   l0a[0x0a00], l1[0x0e00], f16[16,16], transpose
    set_flag    mte1 -> cube, 5
    wait_flag   cube -> mte1, 7
    mte1.copy   l0b[0x0600], l1[0x1a00], f16[16,16]
    set_flag    mte1 -> cube, 7
    wait_flag   mte1 -> cube, 5
    wait_flag   mte1 -> cube, 7
    mmad        l0c[0x1000], l0a[0x0a00], l0b[0x0600], f16, m=16, k=16, n=16
    mmad        l0c[0x1400], l0a[0x0c00], l0b[0x0600], f16, m=1, k=16, n=16
    set_flag    cube -> mte1, 5
    set_flag    cube -> mte1, 7
    set_flag    mte1 -> mte2, 6
    set_flag    mte1 -> mte2, 3
    set_flag    cube -> fix, 2
    wait_flag   cube -> fix, 2
    fixpipe     ws_pv[0x0440], l0c[0x1000], f32[16,16]
    fixpipe     ws_pv[0x0840], l0c[0x1400], f32[16]
    set_cross   fix -> mte2, 1, core=1
    set_cross   fix -> mte2, 1, core=2
    set_flag    fix -> cube, 2
    wait_flag   mte1 -> mte2, 3
    mte2.copy   l1[0x0c00], v[0x0400], f16[8,16]
    set_flag    mte2 -> mte1, 3
    wait_flag   mte1 -> mte2, 5
    wait_cross  mte3 -> mte2, 0, core=1
    wait_cross  mte3 -> mte2, 0, core=2
    mte2.copy   l1[0x1400], ws_p[0x0000], f16[32,8]
    set_flag    mte2 -> mte1, 5
    wait_flag   mte2 -> mte1, 5
    wait_flag   mte2 -> mte1, 4
    wait_flag   fix -> cube, 2
    wait_flag   cube -> mte1, 4
    mte1.copy   l0a[0x0800], l1[0x1000], f16[16,16], transpose
    set_flag    mte1 -> cube, 4
    wait_flag   cube -> mte1, 6
    mte1.copy   l0b[0x0400], l1[0x1400], f16[16,8]
    set_flag    mte1 -> cube, 6
    wait_flag   mte1 -> cube, 4
    wait_flag   mte1 -> cube, 6
    mmad        l0c[0x1000], l0a[0x0800], l0b[0x0400], f16, m=16, k=16, n=8, init
    mmad        l0c[0x1400], l0a[0x0c00], l0b[0x0400], f16, m=1, k=16, n=8, init
    set_flag    cube -> mte1, 4
    set_flag    cube -> mte1, 6
    wait_flag   cube -> mte1, 5
    mte1.copy   l0a[0x0a00], l1[0x1200], f16[16,16], transpose
    set_flag    mte1 -> cube, 5
    wait_flag   cube -> mte1, 7
    mte1.copy   l0b[0x0600], l1[0x1500], f16[16,8]
    set_flag    mte1 -> cube, 7
    wait_flag   mte1 -> cube, 5
    wait_flag   mte1 -> cube, 7
    mmad        l0c[0x1000], l0a[0x0a00], l0b[0x0600], f16, m=16, k=16, n=8
    mmad        l0c[0x1400], l0a[0x0c00], l0b[0x0600], f16, m=1, k=16, n=8
    set_flag    cube -> fix, 2
    wait_flag   cube -> fix, 2
    fixpipe     ws_pv[0x0880], l0c[0x1000], f32[16,8]
    fixpipe     ws_pv[0x0a80], l0c[0x1400], f32[8]
    set_cross   fix -> mte2, 1, core=1
    set_cross   fix -> mte2, 1, core=2
    set_flag    fix -> cube, 2
    wait_flag   mte1 -> mte2, 6
    wait_cross  mte3 -> mte2, 0, core=1
    wait_cross  mte3 -> mte2, 0, core=2
    mte2.copy   l1[0x1800], ws_p[0x0400], f16[8,8]
    set_flag    mte2 -> mte1, 6
    wait_flag   mte2 -> mte1, 6
    wait_flag   mte2 -> mte1, 3
    wait_flag   fix -> cube, 2
    wait_flag   cube -> mte1, 4
    mte1.copy   l0a[0x0800], l1[0x0c00], f16[8,16], transpose
    set_flag    mte1 -> cube, 4
    wait_flag   cube -> mte1, 6
    mte1.copy   l0b[0x0400], l1[0x1800], f16[8,8]
    set_flag    mte1 -> cube, 6
    wait_flag   mte1 -> cube, 4
    wait_flag   mte1 -> cube, 6
    mmad        l0c[0x1000], l0a[0x0800], l0b[0x0400], f16, m=16, k=8, n=8, init
    mmad        l0c[0x1400], l0a[0x0c00], l0b[0x0400], f16, m=1, k=8, n=8, init
    set_flag    cube -> fix, 2
    wait_flag   cube -> fix, 2
    fixpipe     ws_pv[0x0cc0], l0c[0x1000], f32[16,8]
    fixpipe     ws_pv[0x0ec0], l0c[0x1400], f32[8]
    set_cross   fix -> mte2, 1, core=1
    set_cross   fix -> mte2, 1, core=2
.core 1
    v.dup       ub[0x1820], 1.0, f16[16]
    set_flag    v -> mte3, 3
    wait_flag   v -> mte3, 3
    mte3.copy   ws_ones[0x0000], ub[0x1820], f16[16]
    set_cross   mte3 -> mte2, 1, core=0
    wait_cross  fix -> mte2, 0, core=0
    mte2.copy   ub[0x0000], ws_s[0x0000], f16[32,8], src_stride=16, dst_stride=16
    set_cross   mte2 -> fix, 0, core=0
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.triu      ub[0x0000], ub[0x0000], -inf, f16[32,8], diag=0, dst_stride=16, src_stride=16
    v.max       ub[0x0800], ub[0x0000], ub[0x0200], f16[16,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0900], f16[8,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0880], f16[4,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0840], f16[2,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0820], f16[8]
    v.cast      ub[0x15a0], ub[0x0800], f16[8], to=f32
    v.cast      ub[0x16e0], ub[0x15a0], f32[8], to=f16
    v.sub       ub[0x0000], ub[0x0000], ub[0x16e0], f16[32,8], dst_stride=16, src0_stride=16, src1_stride=0
    v.exp       ub[0x0000], ub[0x0000], f16[32,8], dst_stride=16, src_stride=16
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   ws_p[0x0000], ub[0x0000], f16[32,8], src_stride=16, dst_stride=16
    set_cross   mte3 -> mte2, 0, core=0
    set_flag    mte3 -> mte2, 0
    wait_cross  fix -> mte2, 0, core=0
    mte2.copy   ub[0x0400], ws_s[0x0400], f16[32,8], src_stride=16, dst_stride=16
    set_cross   mte2 -> fix, 0, core=0
    set_flag    mte2 -> v, 1
    wait_flag   mte2 -> v, 1
    v.triu      ub[0x0400], ub[0x0400], -inf, f16[32,8], diag=-16, dst_stride=16, src_stride=16
    v.max       ub[0x0800], ub[0x0400], ub[0x0600], f16[16,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0900], f16[8,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0880], f16[4,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0840], f16[2,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0820], f16[8]
    v.cast      ub[0x1600], ub[0x0800], f16[8], to=f32
    v.cast      ub[0x16e0], ub[0x1600], f32[8], to=f16
    v.sub       ub[0x0400], ub[0x0400], ub[0x16e0], f16[32,8], dst_stride=16, src0_stride=16, src1_stride=0
    v.exp       ub[0x0400], ub[0x0400], f16[32,8], dst_stride=16, src_stride=16
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   ws_p[0x0400], ub[0x0400], f16[32,8], src_stride=16, dst_stride=16
    set_cross   mte3 -> mte2, 0, core=0
    set_flag    mte3 -> mte2, 1
    wait_flag   mte3 -> mte2, 0
    wait_cross  fix -> mte2, 0, core=0
    mte2.copy   ub[0x0000], ws_s[0x0000], f16[32,4], src_stride=8, dst_stride=16
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.max       ub[0x0800], ub[0x0000], ub[0x0200], f16[16,4], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0900], f16[8,4], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0880], f16[4,4], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0840], f16[2,4], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0820], f16[4]
    v.cast      ub[0x15a0], ub[0x0800], f16[4], to=f32
    v.cast      ub[0x16e0], ub[0x15a0], f32[4], to=f16
    v.sub       ub[0x0000], ub[0x0000], ub[0x16e0], f16[32,4], dst_stride=16, src0_stride=16, src1_stride=0
    v.exp       ub[0x0000], ub[0x0000], f16[32,4], dst_stride=16, src_stride=16
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    wait_cross  mte2 -> mte3, 0, core=0
    mte3.copy   ws_p[0x0000], ub[0x0000], f16[32,4], src_stride=16, dst_stride=8
    set_cross   mte3 -> mte2, 0, core=0
    wait_flag   mte3 -> mte2, 1
    wait_cross  fix -> mte2, 0, core=0
    mte2.copy   ub[0x0400], ws_s[0x0400], f16[8,4], src_stride=8, dst_stride=16
    set_flag    mte2 -> v, 1
    wait_flag   mte2 -> v, 1
    v.triu      ub[0x0400], ub[0x0400], -inf, f16[8,4], diag=0, dst_stride=16, src_stride=16
    v.max       ub[0x0800], ub[0x0400], ub[0x0480], f16[4,4], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0840], f16[2,4], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0820], f16[4]
    v.cast      ub[0x16c0], ub[0x0800], f16[4], to=f32
    v.max       ub[0x15c0], ub[0x15a0], ub[0x16c0], f32[4]
    v.sub       ub[0x16a0], ub[0x15a0], ub[0x15c0], f32[4]
    v.exp       ub[0x1680], ub[0x16a0], f32[4]
    v.cast      ub[0x16e0], ub[0x15c0], f32[4], to=f16
    v.sub       ub[0x0400], ub[0x0400], ub[0x16e0], f16[8,4], dst_stride=16, src0_stride=16, src1_stride=0
    v.exp       ub[0x0400], ub[0x0400], f16[8,4], dst_stride=16, src_stride=16
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    wait_cross  mte2 -> mte3, 0, core=0
    mte3.copy   ws_p[0x0400], ub[0x0400], f16[8,4], src_stride=16, dst_stride=8
    set_cross   mte3 -> mte2, 0, core=0
    wait_cross  fix -> mte2, 1, core=0
    mte2.copy   ub[0x0a00], ws_pv[0x0000], f32[17,8], src_stride=16
    set_flag    mte2 -> v, 2
    wait_flag   mte2 -> v, 2
    v.recip     ub[0x1700], ub[0x0c00], f32[8]
    v.copy      ub[0x1720], ub[0x1700], f32[8,8], src_stride=0
    v.mul       ub[0x0a00], ub[0x0a00], ub[0x1720], f32[2,64], src1_stride=0
    v.cast      ub[0x0800], ub[0x0a00], f32[16,8], to=f16, dst_stride=16
    v.transpose ub[0x14a0], ub[0x0800], f16[16,8], src_stride=16
    set_flag    v -> mte3, 2
    set_flag    v -> mte2, 0
    wait_flag   v -> mte3, 2
    mte3.copy   o[0x0000], ub[0x14a0], f16[8,16]
    set_flag    mte3 -> v, 0
    wait_cross  fix -> mte2, 1, core=0
    mte2.copy   ub[0x0c20], ws_pv[0x0440], f32[17,8], src_stride=16
    set_flag    mte2 -> v, 3
    wait_flag   mte2 -> v, 3
    v.recip     ub[0x1700], ub[0x0e20], f32[8]
    v.copy      ub[0x1720], ub[0x1700], f32[8,8], src_stride=0
    v.mul       ub[0x0c20], ub[0x0c20], ub[0x1720], f32[2,64], src1_stride=0
    wait_flag   mte3 -> v, 0
    v.cast      ub[0x0800], ub[0x0c20], f32[16,8], to=f16, dst_stride=16
    v.transpose ub[0x14a0], ub[0x0800], f16[16,8], src_stride=16
    set_flag    v -> mte3, 2
    wait_flag   v -> mte3, 2
    mte3.copy   o[0x0200], ub[0x14a0], f16[8,16]
    set_flag    mte3 -> v, 0
    wait_flag   v -> mte2, 0
    wait_cross  fix -> mte2, 1, core=0
    mte2.copy   ub[0x0a00], ws_pv[0x0880], f32[17,4], src_stride=8, dst_stride=8
    set_flag    mte2 -> v, 2
    wait_flag   mte2 -> v, 2
    v.mul       ub[0x0a00], ub[0x0a00], ub[0x1680], f32[17,4], dst_stride=8, src0_stride=8, src1_stride=0
    wait_cross  fix -> mte2, 1, core=0
    mte2.copy   ub[0x0e40], ws_pv[0x0cc0], f32[17,4], src_stride=8, dst_stride=8
    set_flag    mte2 -> v, 4
    wait_flag   mte2 -> v, 4
    v.add       ub[0x0a00], ub[0x0a00], ub[0x0e40], f32[17,4], dst_stride=8, src0_stride=8, src1_stride=8
    v.recip     ub[0x1700], ub[0x0c00], f32[4]
    v.mul       ub[0x0a00], ub[0x0a00], ub[0x1700], f32[16,4], dst_stride=8, src0_stride=8, src1_stride=0
    wait_flag   mte3 -> v, 0
    v.cast      ub[0x0800], ub[0x0a00], f32[16,4], to=f16, dst_stride=16, src_stride=8
    v.transpose ub[0x14a0], ub[0x0800], f16[16,4], src_stride=16
    set_flag    v -> mte3, 2
    wait_flag   v -> mte3, 2
    mte3.copy   o[0x0400], ub[0x14a0], f16[4,16]
.core 2
    wait_cross  fix -> mte2, 0, core=0
    mte2.copy   ub[0x0000], ws_s[0x0010], f16[32,8], src_stride=16, dst_stride=16
    set_cross   mte2 -> fix, 0, core=0
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.triu      ub[0x0000], ub[0x0000], -inf, f16[32,8], diag=-8, dst_stride=16, src_stride=16
    v.max       ub[0x0800], ub[0x0000], ub[0x0200], f16[16,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0900], f16[8,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0880], f16[4,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0840], f16[2,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0820], f16[8]
    v.cast      ub[0x15a0], ub[0x0800], f16[8], to=f32
    v.cast      ub[0x16e0], ub[0x15a0], f32[8], to=f16
    v.sub       ub[0x0000], ub[0x0000], ub[0x16e0], f16[32,8], dst_stride=16, src0_stride=16, src1_stride=0
    v.exp       ub[0x0000], ub[0x0000], f16[32,8], dst_stride=16, src_stride=16
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   ws_p[0x0010], ub[0x0000], f16[32,8], src_stride=16, dst_stride=16
    set_cross   mte3 -> mte2, 0, core=0
    set_flag    mte3 -> mte2, 0
    wait_cross  fix -> mte2, 0, core=0
    mte2.copy   ub[0x0400], ws_s[0x0410], f16[32,8], src_stride=16, dst_stride=16
    set_cross   mte2 -> fix, 0, core=0
    set_flag    mte2 -> v, 1
    wait_flag   mte2 -> v, 1
    v.triu      ub[0x0400], ub[0x0400], -inf, f16[32,8], diag=-24, dst_stride=16, src_stride=16
    v.max       ub[0x0800], ub[0x0400], ub[0x0600], f16[16,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0900], f16[8,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0880], f16[4,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0840], f16[2,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0820], f16[8]
    v.cast      ub[0x1600], ub[0x0800], f16[8], to=f32
    v.cast      ub[0x16e0], ub[0x1600], f32[8], to=f16
    v.sub       ub[0x0400], ub[0x0400], ub[0x16e0], f16[32,8], dst_stride=16, src0_stride=16, src1_stride=0
    v.exp       ub[0x0400], ub[0x0400], f16[32,8], dst_stride=16, src_stride=16
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   ws_p[0x0410], ub[0x0400], f16[32,8], src_stride=16, dst_stride=16
    set_cross   mte3 -> mte2, 0, core=0
    set_flag    mte3 -> mte2, 1
    wait_flag   mte3 -> mte2, 0
    wait_cross  fix -> mte2, 0, core=0
    mte2.copy   ub[0x0000], ws_s[0x0008], f16[32,4], src_stride=8, dst_stride=16
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.max       ub[0x0800], ub[0x0000], ub[0x0200], f16[16,4], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0900], f16[8,4], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0880], f16[4,4], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0840], f16[2,4], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0820], f16[4]
    v.cast      ub[0x15a0], ub[0x0800], f16[4], to=f32
    v.cast      ub[0x16e0], ub[0x15a0], f32[4], to=f16
    v.sub       ub[0x0000], ub[0x0000], ub[0x16e0], f16[32,4], dst_stride=16, src0_stride=16, src1_stride=0
    v.exp       ub[0x0000], ub[0x0000], f16[32,4], dst_stride=16, src_stride=16
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    wait_cross  mte2 -> mte3, 0, core=0
    mte3.copy   ws_p[0x0008], ub[0x0000], f16[32,4], src_stride=16, dst_stride=8
    set_cross   mte3 -> mte2, 0, core=0
    wait_flag   mte3 -> mte2, 1
    wait_cross  fix -> mte2, 0, core=0
    mte2.copy   ub[0x0400], ws_s[0x0408], f16[8,4], src_stride=8, dst_stride=16
    set_flag    mte2 -> v, 1
    wait_flag   mte2 -> v, 1
    v.triu      ub[0x0400], ub[0x0400], -inf, f16[8,4], diag=-4, dst_stride=16, src_stride=16
    v.max       ub[0x0800], ub[0x0400], ub[0x0480], f16[4,4], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0840], f16[2,4], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0820], f16[4]
    v.cast      ub[0x16c0], ub[0x0800], f16[4], to=f32
    v.max       ub[0x15c0], ub[0x15a0], ub[0x16c0], f32[4]
    v.sub       ub[0x16a0], ub[0x15a0], ub[0x15c0], f32[4]
    v.exp       ub[0x1680], ub[0x16a0], f32[4]
    v.cast      ub[0x16e0], ub[0x15c0], f32[4], to=f16
    v.sub       ub[0x0400], ub[0x0400], ub[0x16e0], f16[8,4], dst_stride=16, src0_stride=16, src1_stride=0
    v.exp       ub[0x0400], ub[0x0400], f16[8,4], dst_stride=16, src_stride=16
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    wait_cross  mte2 -> mte3, 0, core=0
    mte3.copy   ws_p[0x0408], ub[0x0400], f16[8,4], src_stride=16, dst_stride=8
    set_cross   mte3 -> mte2, 0, core=0
    wait_cross  fix -> mte2, 1, core=0
    mte2.copy   ub[0x0a00], ws_pv[0x0020], f32[17,8], src_stride=16
    set_flag    mte2 -> v, 2
    wait_flag   mte2 -> v, 2
    v.recip     ub[0x1700], ub[0x0c00], f32[8]
    v.copy      ub[0x1720], ub[0x1700], f32[8,8], src_stride=0
    v.mul       ub[0x0a00], ub[0x0a00], ub[0x1720], f32[2,64], src1_stride=0
    v.cast      ub[0x0800], ub[0x0a00], f32[16,8], to=f16, dst_stride=16
    v.transpose ub[0x14a0], ub[0x0800], f16[16,8], src_stride=16
    set_flag    v -> mte3, 2
    set_flag    v -> mte2, 0
    wait_flag   v -> mte3, 2
    mte3.copy   o[0x0100], ub[0x14a0], f16[8,16]
    set_flag    mte3 -> v, 0
    wait_cross  fix -> mte2, 1, core=0
    mte2.copy   ub[0x0c20], ws_pv[0x0460], f32[17,8], src_stride=16
    set_flag    mte2 -> v, 3
    wait_flag   mte2 -> v, 3
    v.recip     ub[0x1700], ub[0x0e20], f32[8]
    v.copy      ub[0x1720], ub[0x1700], f32[8,8], src_stride=0
    v.mul       ub[0x0c20], ub[0x0c20], ub[0x1720], f32[2,64], src1_stride=0
    wait_flag   mte3 -> v, 0
    v.cast      ub[0x0800], ub[0x0c20], f32[16,8], to=f16, dst_stride=16
    v.transpose ub[0x14a0], ub[0x0800], f16[16,8], src_stride=16
    set_flag    v -> mte3, 2
    wait_flag   v -> mte3, 2
    mte3.copy   o[0x0300], ub[0x14a0], f16[8,16]
    set_flag    mte3 -> v, 0
    wait_flag   v -> mte2, 0
    wait_cross  fix -> mte2, 1, core=0
    mte2.copy   ub[0x0a00], ws_pv[0x0890], f32[17,4], src_stride=8, dst_stride=8
    set_flag    mte2 -> v, 2
    wait_flag   mte2 -> v, 2
    v.mul       ub[0x0a00], ub[0x0a00], ub[0x1680], f32[17,4], dst_stride=8, src0_stride=8, src1_stride=0
    wait_cross  fix -> mte2, 1, core=0
    mte2.copy   ub[0x0e40], ws_pv[0x0cd0], f32[17,4], src_stride=8, dst_stride=8
    set_flag    mte2 -> v, 4
    wait_flag   mte2 -> v, 4
    v.add       ub[0x0a00], ub[0x0a00], ub[0x0e40], f32[17,4], dst_stride=8, src0_stride=8, src1_stride=8
    v.recip     ub[0x1700], ub[0x0c00], f32[4]
    v.mul       ub[0x0a00], ub[0x0a00], ub[0x1700], f32[16,4], dst_stride=8, src0_stride=8, src1_stride=0
    wait_flag   mte3 -> v, 0
    v.cast      ub[0x0800], ub[0x0a00], f32[16,4], to=f16, dst_stride=16, src_stride=8
    v.transpose ub[0x14a0], ub[0x0800], f16[16,4], src_stride=16
    set_flag    v -> mte3, 2
    wait_flag   v -> mte3, 2
    mte3.copy   o[0x0480], ub[0x14a0], f16[4,16]
