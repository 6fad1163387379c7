; attention 1x1x40x16 causal (fast): o[b,h] = softmax(q[b,h]·k[b,h]ᵀ/√16 + causal mask)·v[b,h]
; schedule: flash · tile q=16,qb=32,kv=32,k0=16 · depth 2 · 1 core
; compiled by dsasim for chip edu; GM traffic 7,168 B expected
.chip edu
.tensor q f16[1,1,40,16] in
.tensor k f16[1,1,40,16] in
.tensor v f16[1,1,40,16] in
.tensor o f16[1,1,40,16] out
.core 0
    v.dup       ub[0x1c20], 1.0, f16[16]
    set_flag    v -> mte3, 3
    wait_flag   v -> mte3, 3
    mte3.copy   l1[0x1c00], ub[0x1c20], f16[16]
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
    fixpipe     ub[0x0000], l0c[0x0000], f32[32,16], to=f16, scale=0.25
    set_flag    fix -> v, 0
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
    fixpipe     ub[0x0400], l0c[0x0800], f32[32,16], to=f16, scale=0.25
    set_flag    fix -> v, 1
    set_flag    fix -> cube, 1
    wait_flag   fix -> v, 0
    v.triu      ub[0x0000], ub[0x0000], -inf, f16[32,16], diag=0
    v.max       ub[0x0800], ub[0x0000], ub[0x0200], f16[16,16]
    v.max       ub[0x0800], ub[0x0800], ub[0x0900], f16[8,16]
    v.max       ub[0x0800], ub[0x0800], ub[0x0880], f16[4,16]
    v.max       ub[0x0800], ub[0x0800], ub[0x0840], f16[2,16]
    v.max       ub[0x0800], ub[0x0800], ub[0x0820], f16[16]
    v.cast      ub[0x18c0], ub[0x0800], f16[16], to=f32
    v.cast      ub[0x1ac0], ub[0x18c0], f32[16], to=f16
    v.copy      ub[0x1b20], ub[0x1ac0], f16[8,16], src_stride=0
    v.sub       ub[0x0000], ub[0x0000], ub[0x1b20], f16[4,128], src1_stride=0
    v.exp       ub[0x0000], ub[0x0000], f16[32,16]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   l1[0x1400], ub[0x0000], f16[32,16]
    set_flag    mte3 -> mte1, 0
    set_flag    mte3 -> fix, 0
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
    wait_flag   mte3 -> fix, 0
    fixpipe     ub[0x0000], l0c[0x0000], f32[32,8], to=f16, dst_stride=16, scale=0.25
    set_flag    fix -> v, 0
    wait_flag   fix -> v, 1
    v.triu      ub[0x0400], ub[0x0400], -inf, f16[32,16], diag=-16
    v.max       ub[0x0800], ub[0x0400], ub[0x0600], f16[16,16]
    v.max       ub[0x0800], ub[0x0800], ub[0x0900], f16[8,16]
    v.max       ub[0x0800], ub[0x0800], ub[0x0880], f16[4,16]
    v.max       ub[0x0800], ub[0x0800], ub[0x0840], f16[2,16]
    v.max       ub[0x0800], ub[0x0800], ub[0x0820], f16[16]
    v.cast      ub[0x1980], ub[0x0800], f16[16], to=f32
    v.cast      ub[0x1ac0], ub[0x1980], f32[16], to=f16
    v.copy      ub[0x1b20], ub[0x1ac0], f16[8,16], src_stride=0
    v.sub       ub[0x0400], ub[0x0400], ub[0x1b20], f16[4,128], src1_stride=0
    v.exp       ub[0x0400], ub[0x0400], f16[32,16]
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   l1[0x1800], ub[0x0400], f16[32,16]
    set_flag    mte3 -> mte1, 1
    set_flag    mte3 -> fix, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0400], k[0x0400], f16[8,16]
    set_flag    mte2 -> mte1, 1
    wait_flag   mte3 -> mte1, 0
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
    set_flag    mte1 -> mte3, 0
    set_flag    cube -> fix, 2
    wait_flag   cube -> fix, 2
    fixpipe     ub[0x0a00], l0c[0x1000], f32[16,16]
    fixpipe     ub[0x0e00], l0c[0x1400], f32[16]
    set_flag    fix -> v, 2
    set_flag    fix -> cube, 2
    wait_flag   mte2 -> mte1, 1
    wait_flag   fix -> cube, 1
    wait_flag   cube -> mte1, 3
    mte1.copy   l0a[0x0400], l1[0x0400], f16[8,16]
    set_flag    mte1 -> cube, 3
    wait_flag   mte1 -> cube, 3
    mmad        l0c[0x0800], l0a[0x0400], l0b[0x0000], f16, m=8, k=16, n=8, init
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    wait_flag   mte3 -> fix, 1
    fixpipe     ub[0x0400], l0c[0x0800], f32[8,8], to=f16, dst_stride=16, scale=0.25
    set_flag    fix -> v, 1
    wait_flag   fix -> v, 2
    v.recip     ub[0x1ae0], ub[0x0e00], f32[16]
    v.copy      ub[0x1b20], ub[0x1ae0], f32[4,16], src_stride=0
    v.mul       ub[0x0a00], ub[0x0a00], ub[0x1b20], f32[4,64], src1_stride=0
    v.cast      ub[0x0800], ub[0x0a00], f32[16,16], to=f16
    v.transpose ub[0x16c0], ub[0x0800], f16[16,16]
    set_flag    v -> mte3, 2
    set_flag    v -> fix, 0
    wait_flag   v -> mte3, 2
    mte3.copy   o[0x0000], ub[0x16c0], f16[16,16]
    set_flag    mte3 -> v, 0
    wait_flag   fix -> v, 0
    v.max       ub[0x0800], ub[0x0000], ub[0x0200], f16[16,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0900], f16[8,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0880], f16[4,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0840], f16[2,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0820], f16[8]
    v.cast      ub[0x18c0], ub[0x0800], f16[8], to=f32
    v.cast      ub[0x1ac0], ub[0x18c0], f32[8], to=f16
    v.sub       ub[0x0000], ub[0x0000], ub[0x1ac0], f16[32,8], dst_stride=16, src0_stride=16, src1_stride=0
    v.exp       ub[0x0000], ub[0x0000], f16[32,8], dst_stride=16, src_stride=16
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    wait_flag   mte1 -> mte3, 0
    mte3.copy   l1[0x1400], ub[0x0000], f16[32,8], src_stride=16
    set_flag    mte3 -> mte1, 0
    mte2.copy   l1[0x1000], v[0x0000], f16[32,16]
    set_flag    mte2 -> mte1, 4
    wait_flag   mte3 -> mte1, 1
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
    set_flag    mte1 -> mte3, 1
    set_flag    mte1 -> mte2, 3
    set_flag    cube -> fix, 2
    wait_flag   cube -> fix, 2
    fixpipe     ub[0x0e40], l0c[0x1000], f32[16,16]
    fixpipe     ub[0x1240], l0c[0x1400], f32[16]
    set_flag    fix -> v, 3
    set_flag    fix -> cube, 2
    wait_flag   fix -> v, 3
    v.recip     ub[0x1ae0], ub[0x1240], f32[16]
    v.copy      ub[0x1b20], ub[0x1ae0], f32[4,16], src_stride=0
    v.mul       ub[0x0e40], ub[0x0e40], ub[0x1b20], f32[4,64], src1_stride=0
    wait_flag   mte3 -> v, 0
    v.cast      ub[0x0800], ub[0x0e40], f32[16,16], to=f16
    v.transpose ub[0x16c0], ub[0x0800], f16[16,16]
    set_flag    v -> mte3, 2
    wait_flag   v -> mte3, 2
    mte3.copy   o[0x0200], ub[0x16c0], f16[16,16]
    set_flag    mte3 -> v, 0
    wait_flag   fix -> v, 1
    v.triu      ub[0x0400], ub[0x0400], -inf, f16[8,8], diag=0, dst_stride=16, src_stride=16
    v.max       ub[0x0800], ub[0x0400], ub[0x0480], f16[4,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0840], f16[2,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.max       ub[0x0800], ub[0x0800], ub[0x0820], f16[8]
    v.cast      ub[0x1a80], ub[0x0800], f16[8], to=f32
    v.max       ub[0x1900], ub[0x18c0], ub[0x1a80], f32[8]
    v.sub       ub[0x1a40], ub[0x18c0], ub[0x1900], f32[8]
    v.exp       ub[0x1a00], ub[0x1a40], f32[8]
    v.cast      ub[0x1ac0], ub[0x1900], f32[8], to=f16
    v.sub       ub[0x0400], ub[0x0400], ub[0x1ac0], f16[8,8], dst_stride=16, src0_stride=16, src1_stride=0
    v.exp       ub[0x0400], ub[0x0400], f16[8,8], dst_stride=16, src_stride=16
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    wait_flag   mte1 -> mte3, 1
    mte3.copy   l1[0x1800], ub[0x0400], f16[8,8], src_stride=16
    set_flag    mte3 -> mte1, 1
    wait_flag   mte1 -> mte2, 3
    mte2.copy   l1[0x0c00], v[0x0400], f16[8,16]
    set_flag    mte2 -> mte1, 3
    wait_flag   mte3 -> mte1, 0
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
    wait_flag   v -> fix, 0
    fixpipe     ub[0x0a00], l0c[0x1000], f32[16,8], dst_stride=16
    fixpipe     ub[0x0e00], l0c[0x1400], f32[8]
    set_flag    fix -> v, 2
    set_flag    fix -> cube, 2
    wait_flag   mte3 -> mte1, 1
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
    fixpipe     ub[0x1280], l0c[0x1000], f32[16,8], dst_stride=16
    fixpipe     ub[0x1680], l0c[0x1400], f32[8]
    set_flag    fix -> v, 4
    wait_flag   fix -> v, 2
    v.mul       ub[0x0a00], ub[0x0a00], ub[0x1a00], f32[17,8], dst_stride=16, src0_stride=16, src1_stride=0
    wait_flag   fix -> v, 4
    v.add       ub[0x0a00], ub[0x0a00], ub[0x1280], f32[17,8], dst_stride=16, src0_stride=16, src1_stride=16
    v.recip     ub[0x1ae0], ub[0x0e00], f32[8]
    v.mul       ub[0x0a00], ub[0x0a00], ub[0x1ae0], f32[16,8], dst_stride=16, src0_stride=16, src1_stride=0
    wait_flag   mte3 -> v, 0
    v.cast      ub[0x0800], ub[0x0a00], f32[16,8], to=f16, dst_stride=16, src_stride=16
    v.transpose ub[0x16c0], ub[0x0800], f16[16,8], src_stride=16
    set_flag    v -> mte3, 2
    wait_flag   v -> mte3, 2
    mte3.copy   o[0x0400], ub[0x16c0], f16[8,16]
