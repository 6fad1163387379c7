; attention 1x1x40x16 causal (fast): o[b,h] = softmax(q[b,h]·k[b,h]ᵀ/√16 + causal mask)·v[b,h]
; schedule: flash · tile q=16,qb=32,kv=32,k0=16 · depth 2 · 1 core
; compiled by dsasim for chip edu-separated; GM traffic 37,120 B expected
.chip edu-separated
.tensor q f16[1,1,40,16] in
.tensor k f16[1,1,40,16] in
.tensor v f16[1,1,40,16] in
.tensor o f16[1,1,40,16] out
.tensor ws_c2v i8[1,4096] scratch
.tensor ws_v2c i8[1,2048] scratch
.core 0
    mte2.copy   l1[0x0000], q[0x0000], f16[16,16]
    mte2.copy   l1[0x0400], q[0x0200], f16[16,16]
    set_flag    mte2 -> mte1, 4
    mte2.copy   l1[0x0200], q[0x0400], f16[8,16]
    set_flag    mte2 -> mte1, 5
    mte2.copy   l1[0x0800], k[0x0000], f16[32,16]
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x0c00], k[0x0000], f16[32,16]
    wait_flag   mte2 -> mte1, 4
    mte1.copy   l0a[0x0000], l1[0x0000], f16[16,16]
    set_flag    mte2 -> mte1, 1
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0b[0x0000], l1[0x0800], f16[32,16], transpose
    set_flag    mte1 -> cube, 2
    mte1.copy   l0a[0x0200], l1[0x0400], f16[16,16]
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=16, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x0800], f16[32,16], transpose
    set_flag    cube -> fix, 0
    set_flag    cube -> mte1, 2
    wait_flag   cube -> fix, 0
    fixpipe     ws_c2v[0x0000], l0c[0x0000], f32[16,32], to=f16, scale=0.25
    set_flag    mte1 -> mte2, 0
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0800], k[0x0400], f16[8,16]
    set_flag    mte1 -> cube, 3
    wait_flag   mte1 -> cube, 3
    mmad        l0c[0x0800], l0a[0x0200], l0b[0x0400], f16, m=16, k=16, n=32, init
    wait_flag   mte2 -> mte1, 5
    wait_flag   cube -> mte1, 2
    mte1.copy   l0a[0x0000], l1[0x0200], f16[8,16]
    set_flag    fix -> cube, 0
    set_cross   fix -> mte2, 0, core=1
    set_cross   fix -> mte2, 0, core=2
    wait_flag   mte2 -> mte1, 1
    mte1.copy   l0b[0x0000], l1[0x0c00], f16[32,16], transpose
    set_flag    cube -> mte1, 3
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     ws_c2v[0x0400], l0c[0x0800], f32[16,32], to=f16, scale=0.25
    wait_flag   fix -> cube, 0
    set_flag    mte1 -> cube, 2
    wait_flag   cube -> mte1, 3
    set_flag    mte1 -> cube, 3
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=8, k=16, n=32, init
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x1000], v[0x0000], f16[32,16]
    set_flag    fix -> cube, 1
    set_cross   fix -> mte2, 1, core=1
    set_cross   fix -> mte2, 1, core=2
    set_flag    cube -> fix, 0
    set_flag    cube -> mte1, 2
    wait_flag   cube -> fix, 0
    wait_flag   mte1 -> cube, 3
    wait_flag   fix -> cube, 1
    set_flag    cube -> mte1, 3
    set_flag    cube -> fix, 1
    set_flag    mte2 -> mte1, 2
    mte2.copy   l1[0x1400], v[0x0000], f16[32,16]
    set_flag    mte2 -> mte1, 3
    wait_flag   mte2 -> mte1, 2
    wait_cross  mte2 -> fix, 0, core=1
    wait_cross  mte2 -> fix, 0, core=2
    fixpipe     ws_c2v[0x0000], l0c[0x0000], f32[8,32], to=f16, scale=0.25
    set_flag    fix -> cube, 0
    set_cross   fix -> mte2, 0, core=1
    set_cross   fix -> mte2, 0, core=2
    wait_flag   cube -> fix, 1
    wait_cross  mte3 -> mte2, 0, core=1
    wait_cross  mte3 -> mte2, 0, core=2
    mte2.copy   l1[0x1800], ws_v2c[0x0000], f16[16,32]
    set_flag    mte2 -> mte1, 6
    set_cross   mte2 -> mte3, 0, core=1
    set_cross   mte2 -> mte3, 0, core=2
    wait_flag   mte2 -> mte1, 6
    mte1.copy   l0a[0x0400], l1[0x1000], f16[16,16], transpose
    mte1.copy   l0b[0x0800], l1[0x1800], f16[16,16], src_stride=32, transpose
    set_flag    mte1 -> cube, 0
    mte1.copy   l0a[0x0600], l1[0x1200], f16[16,16], transpose
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0800], f16, m=16, k=16, n=16, init
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0a00], l1[0x1820], f16[16,16], src_stride=32, transpose
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0600], l0b[0x0a00], f16, m=16, k=16, n=16
    set_flag    mte1 -> mte2, 3
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 2
    set_flag    fix -> cube, 1
    set_cross   fix -> mte2, 1, core=1
    set_cross   fix -> mte2, 1, core=2
    wait_flag   cube -> fix, 2
    fixpipe     ws_c2v[0x0800], l0c[0x1000], f32[16,16]
    set_flag    fix -> cube, 2
    set_cross   fix -> mte2, 2, core=1
    set_cross   fix -> mte2, 2, core=2
    wait_cross  mte3 -> mte2, 1, core=1
    wait_cross  mte3 -> mte2, 1, core=2
    mte2.copy   l1[0x1c00], ws_v2c[0x0400], f16[16,32]
    set_flag    mte2 -> mte1, 7
    set_cross   mte2 -> mte3, 1, core=1
    set_cross   mte2 -> mte3, 1, core=2
    wait_flag   mte2 -> mte1, 7
    wait_flag   cube -> mte1, 2
    mte1.copy   l0a[0x0000], l1[0x0200], f16[8,16]
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0b[0x0000], l1[0x0800], f16[8,16], transpose
    set_flag    mte1 -> cube, 2
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0400], l1[0x1000], f16[16,16], transpose
    mte1.copy   l0b[0x0800], l1[0x1c00], f16[16,16], src_stride=32, transpose
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0600], l1[0x1200], f16[16,16], transpose
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1400], l0a[0x0400], l0b[0x0800], f16, m=16, k=16, n=16, init
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0a00], l1[0x1c20], f16[16,16], src_stride=32, transpose
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1400], l0a[0x0600], l0b[0x0a00], f16, m=16, k=16, n=16
    set_flag    mte1 -> mte2, 2
    wait_flag   mte1 -> mte2, 2
    mte2.copy   l1[0x1000], v[0x0400], f16[8,16]
    set_flag    mte1 -> mte2, 4
    wait_flag   cube -> mte1, 3
    set_flag    mte1 -> cube, 3
    wait_flag   mte2 -> mte1, 3
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 3
    wait_flag   cube -> fix, 3
    fixpipe     ws_c2v[0x0c00], l0c[0x1400], f32[16,16]
    wait_flag   fix -> cube, 0
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=8, k=16, n=8, init
    set_flag    cube -> fix, 0
    wait_flag   mte1 -> cube, 3
    wait_flag   fix -> cube, 1
    set_flag    cube -> fix, 1
    wait_flag   fix -> cube, 2
    set_flag    fix -> cube, 3
    set_cross   fix -> mte2, 3, core=1
    set_cross   fix -> mte2, 3, core=2
    wait_flag   cube -> fix, 0
    set_flag    mte2 -> mte1, 2
    wait_cross  mte2 -> fix, 0, core=1
    wait_cross  mte2 -> fix, 0, core=2
    fixpipe     ws_c2v[0x0000], l0c[0x0000], f32[8,8], to=f16, dst_stride=32, scale=0.25
    set_cross   fix -> mte2, 0, core=1
    set_cross   fix -> mte2, 0, core=2
    wait_flag   cube -> fix, 1
    wait_cross  mte3 -> mte2, 0, core=1
    wait_cross  mte3 -> mte2, 0, core=2
    wait_flag   mte1 -> mte2, 3
    mte2.copy   l1[0x1800], ws_v2c[0x0000], f16[16,32]
    set_flag    mte2 -> mte1, 6
    set_cross   mte2 -> mte3, 0, core=1
    set_cross   mte2 -> mte3, 0, core=2
    wait_flag   mte2 -> mte1, 6
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0400], l1[0x1400], f16[16,16], transpose
    mte1.copy   l0b[0x0800], l1[0x1800], f16[16,16], src_stride=32, transpose
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0600], l1[0x1600], f16[16,16], transpose
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0800], f16, m=16, k=16, n=16, init
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0a00], l1[0x1820], f16[16,16], src_stride=32, transpose
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0600], l0b[0x0a00], f16, m=16, k=16, n=16
    set_flag    mte1 -> mte2, 3
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 2
    wait_flag   fix -> cube, 3
    set_cross   fix -> mte2, 1, core=1
    set_cross   fix -> mte2, 1, core=2
    wait_flag   cube -> fix, 2
    wait_cross  mte2 -> fix, 2, core=1
    wait_cross  mte2 -> fix, 2, core=2
    fixpipe     ws_c2v[0x0800], l0c[0x1000], f32[16,16]
    set_flag    fix -> cube, 2
    set_cross   fix -> mte2, 2, core=1
    set_cross   fix -> mte2, 2, core=2
    wait_cross  mte3 -> mte2, 1, core=1
    wait_cross  mte3 -> mte2, 1, core=2
    wait_flag   mte1 -> mte2, 4
    mte2.copy   l1[0x1c00], ws_v2c[0x0400], f16[16,32]
    set_flag    mte2 -> mte1, 7
    set_cross   mte2 -> mte3, 1, core=1
    set_cross   mte2 -> mte3, 1, core=2
    wait_flag   mte2 -> mte1, 7
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0400], l1[0x1400], f16[16,16], transpose
    mte1.copy   l0b[0x0800], l1[0x1c00], f16[16,16], src_stride=32, transpose
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0600], l1[0x1600], f16[16,16], transpose
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1400], l0a[0x0400], l0b[0x0800], f16, m=16, k=16, n=16, init
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0a00], l1[0x1c20], f16[16,16], src_stride=32, transpose
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1400], l0a[0x0600], l0b[0x0a00], f16, m=16, k=16, n=16
    set_flag    mte1 -> mte2, 4
    wait_flag   mte2 -> mte1, 2
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 3
    wait_flag   cube -> fix, 3
    wait_cross  mte2 -> fix, 3, core=1
    wait_cross  mte2 -> fix, 3, core=2
    fixpipe     ws_c2v[0x0c00], l0c[0x1400], f32[16,16]
    wait_flag   fix -> cube, 2
    set_flag    fix -> cube, 3
    set_cross   fix -> mte2, 3, core=1
    set_cross   fix -> mte2, 3, core=2
    wait_cross  mte3 -> mte2, 0, core=1
    wait_cross  mte3 -> mte2, 0, core=2
    wait_flag   mte1 -> mte2, 3
    mte2.copy   l1[0x1800], ws_v2c[0x0000], f16[16,32]
    set_flag    mte2 -> mte1, 6
    wait_flag   mte2 -> mte1, 6
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0400], l1[0x1000], f16[8,16], transpose
    mte1.copy   l0b[0x0800], l1[0x1800], f16[16,8], src_stride=32, transpose
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0800], f16, m=16, k=8, n=16, init
    set_flag    cube -> fix, 2
    wait_flag   cube -> fix, 2
    wait_cross  mte2 -> fix, 2, core=1
    wait_cross  mte2 -> fix, 2, core=2
    fixpipe     ws_c2v[0x0800], l0c[0x1000], f32[16,16]
    wait_flag   fix -> cube, 3
    set_cross   fix -> mte2, 2, core=1
    set_cross   fix -> mte2, 2, core=2
    wait_cross  mte3 -> mte2, 1, core=1
    wait_cross  mte3 -> mte2, 1, core=2
    wait_flag   mte1 -> mte2, 4
    mte2.copy   l1[0x1c00], ws_v2c[0x0400], f16[16,32]
    set_flag    mte2 -> mte1, 7
    wait_flag   mte2 -> mte1, 7
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0600], l1[0x1000], f16[8,16], transpose
    mte1.copy   l0b[0x0a00], l1[0x1c00], f16[16,8], src_stride=32, transpose
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1400], l0a[0x0600], l0b[0x0a00], f16, m=16, k=8, n=16, init
    set_flag    cube -> fix, 3
    wait_flag   cube -> fix, 3
    wait_cross  mte2 -> fix, 3, core=1
    wait_cross  mte2 -> fix, 3, core=2
    fixpipe     ws_c2v[0x0c00], l0c[0x1400], f32[16,16]
    set_cross   fix -> mte2, 3, core=1
    set_cross   fix -> mte2, 3, core=2
.core 1
    v.dup       ub[0x0000], -inf, f32[16]
    v.dup       ub[0x0080], 1.0, f32[16]
    v.dup       ub[0x0100], 0.0, f32[16,16]
    wait_cross  fix -> mte2, 0, core=0
    mte2.copy   ub[0x26c0], ws_c2v[0x0000], f16[16,32]
    set_flag    mte2 -> v, 0
    set_cross   mte2 -> fix, 0, core=0
    wait_flag   mte2 -> v, 0
    v.tril      ub[0x26c0], ub[0x26c0], -inf, f16[16,32], diag=0
    v.rowmax    ub[0x3700], ub[0x26c0], f16[16,32]
    v.cast      ub[0x36c0], ub[0x3700], f16[16], to=f32
    v.max       ub[0x1600], ub[0x0000], ub[0x36c0], f32[16]
    v.cast      ub[0x3ac0], ub[0x1600], f32[16], to=f16
    v.rowbcast  ub[0x36c0], ub[0x3ac0], f16[16,32]
    v.sub       ub[0x26c0], ub[0x26c0], ub[0x36c0], f16[16,32]
    v.exp       ub[0x1640], ub[0x26c0], f16[16,32]
    v.cast      ub[0x36c0], ub[0x1640], f16[16,32], to=f32
    v.rowsum    ub[0x3ec0], ub[0x36c0], f32[16,32]
    v.cast      ub[0x3f00], ub[0x3ec0], f32[16], to=f16
    v.cast      ub[0x1e40], ub[0x3f00], f16[16], to=f32
    set_flag    v -> mte3, 0
    set_flag    v -> mte2, 0
    v.sub       ub[0x0000], ub[0x0000], ub[0x1600], f32[16]
    wait_flag   v -> mte3, 0
    mte3.copy   ws_v2c[0x0000], ub[0x1640], f16[16,32]
    v.exp       ub[0x0000], ub[0x0000], f32[16]
    set_flag    mte3 -> v, 0
    set_cross   mte3 -> mte2, 0, core=0
    v.mul       ub[0x0080], ub[0x0080], ub[0x0000], f32[16]
    v.add       ub[0x0080], ub[0x0080], ub[0x1e40], f32[16]
    v.copy      ub[0x36c0], ub[0x0000], f32[4,16], src_stride=0
    v.mul       ub[0x0100], ub[0x0100], ub[0x36c0], f32[4,64], src1_stride=0
    wait_cross  fix -> mte2, 1, core=0
    set_flag    mte2 -> v, 1
    wait_cross  fix -> mte2, 0, core=0
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x26c0], ws_c2v[0x0000], f16[8,32]
    set_flag    mte2 -> v, 0
    set_cross   mte2 -> fix, 0, core=0
    wait_flag   mte2 -> v, 1
    set_flag    v -> mte3, 2
    set_flag    v -> mte2, 1
    wait_flag   v -> mte3, 2
    set_flag    mte3 -> v, 2
    set_cross   mte3 -> mte2, 1, core=0
    wait_cross  fix -> mte2, 1, core=0
    wait_flag   v -> mte2, 1
    set_flag    mte2 -> v, 1
    wait_cross  fix -> mte2, 2, core=0
    mte2.copy   ub[0x2ec0], ws_c2v[0x0800], f32[16,16]
    set_flag    mte2 -> v, 2
    set_cross   mte2 -> fix, 2, core=0
    wait_flag   mte2 -> v, 2
    v.add       ub[0x0100], ub[0x0100], ub[0x2ec0], f32[16,16]
    set_flag    v -> mte2, 2
    v.copy      ub[0x0000], ub[0x1600], f32[16]
    wait_cross  fix -> mte2, 3, core=0
    set_flag    mte2 -> v, 3
    set_cross   mte2 -> fix, 3, core=0
    wait_flag   mte2 -> v, 3
    set_flag    v -> mte2, 3
    v.recip     ub[0x0080], ub[0x0080], f32[16]
    v.copy      ub[0x36c0], ub[0x0080], f32[4,16], src_stride=0
    v.mul       ub[0x0100], ub[0x0100], ub[0x36c0], f32[4,64], src1_stride=0
    v.cast      ub[0x36c0], ub[0x0100], f32[16,16], to=f16
    v.transpose ub[0x1200], ub[0x36c0], f16[16,16]
    set_flag    v -> mte3, 4
    wait_flag   v -> mte3, 4
    mte3.copy   o[0x0000], ub[0x1200], f16[16,16]
    set_flag    mte3 -> v, 4
    set_flag    v -> mte3, 5
    wait_flag   v -> mte3, 5
    v.dup       ub[0x0040], -inf, f32[16]
    v.dup       ub[0x00c0], 1.0, f32[16]
    v.dup       ub[0x0500], 0.0, f32[16,16]
    set_flag    mte3 -> v, 5
    wait_flag   mte2 -> v, 0
    v.dup       ub[0x28c0], 0.0, f16[256]
    v.rowmax    ub[0x3700], ub[0x26c0], f16[16,32]
    v.cast      ub[0x36c0], ub[0x3700], f16[16], to=f32
    v.max       ub[0x1600], ub[0x0040], ub[0x36c0], f32[16]
    v.cast      ub[0x3ac0], ub[0x1600], f32[16], to=f16
    v.rowbcast  ub[0x36c0], ub[0x3ac0], f16[16,32]
    v.sub       ub[0x26c0], ub[0x26c0], ub[0x36c0], f16[16,32]
    v.exp       ub[0x1a40], ub[0x26c0], f16[16,32]
    v.cast      ub[0x36c0], ub[0x1a40], f16[16,32], to=f32
    v.rowsum    ub[0x3ec0], ub[0x36c0], f32[16,32]
    v.cast      ub[0x3f00], ub[0x3ec0], f32[16], to=f16
    v.cast      ub[0x1e40], ub[0x3f00], f16[16], to=f32
    set_flag    v -> mte3, 1
    set_flag    v -> mte2, 0
    v.sub       ub[0x0040], ub[0x0040], ub[0x1600], f32[16]
    wait_flag   v -> mte3, 1
    wait_cross  mte2 -> mte3, 0, core=0
    mte3.copy   ws_v2c[0x0000], ub[0x1a40], f16[16,32]
    v.exp       ub[0x0040], ub[0x0040], f32[16]
    set_cross   mte3 -> mte2, 0, core=0
    v.mul       ub[0x00c0], ub[0x00c0], ub[0x0040], f32[16]
    v.add       ub[0x00c0], ub[0x00c0], ub[0x1e40], f32[16]
    v.copy      ub[0x36c0], ub[0x0040], f32[4,16], src_stride=0
    v.mul       ub[0x0500], ub[0x0500], ub[0x36c0], f32[4,64], src1_stride=0
    wait_cross  fix -> mte2, 0, core=0
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x26c0], ws_c2v[0x0000], f16[8,8], src_stride=32, dst_stride=32
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 1
    set_flag    v -> mte3, 3
    set_flag    v -> mte2, 1
    wait_flag   v -> mte3, 3
    wait_cross  mte2 -> mte3, 1, core=0
    set_cross   mte3 -> mte2, 1, core=0
    wait_cross  fix -> mte2, 1, core=0
    wait_flag   v -> mte2, 1
    set_flag    mte2 -> v, 1
    wait_cross  fix -> mte2, 2, core=0
    wait_flag   v -> mte2, 2
    mte2.copy   ub[0x2ec0], ws_c2v[0x0800], f32[16,16]
    set_flag    mte2 -> v, 2
    set_cross   mte2 -> fix, 2, core=0
    wait_flag   mte2 -> v, 2
    v.add       ub[0x0500], ub[0x0500], ub[0x2ec0], f32[16,16]
    set_flag    v -> mte2, 2
    v.copy      ub[0x0040], ub[0x1600], f32[16]
    wait_cross  fix -> mte2, 3, core=0
    wait_flag   v -> mte2, 3
    set_flag    mte2 -> v, 3
    set_cross   mte2 -> fix, 3, core=0
    wait_flag   mte2 -> v, 3
    set_flag    v -> mte2, 3
    wait_flag   mte3 -> v, 0
    wait_flag   mte2 -> v, 0
    v.copy      ub[0x36c0], ub[0x26c0], f16[8,8], src_stride=32
    v.dup       ub[0x26c0], 0.0, f16[8,32], dst_stride=32
    v.copy      ub[0x26c0], ub[0x36c0], f16[8,8], dst_stride=32
    v.dup       ub[0x28c0], 0.0, f16[256]
    v.tril      ub[0x26c0], ub[0x26c0], -inf, f16[16,32], diag=0
    v.rowmax    ub[0x3700], ub[0x26c0], f16[16,32]
    v.cast      ub[0x36c0], ub[0x3700], f16[16], to=f32
    v.max       ub[0x1600], ub[0x0040], ub[0x36c0], f32[16]
    v.cast      ub[0x3ac0], ub[0x1600], f32[16], to=f16
    v.rowbcast  ub[0x36c0], ub[0x3ac0], f16[16,32]
    v.sub       ub[0x26c0], ub[0x26c0], ub[0x36c0], f16[16,32]
    v.exp       ub[0x1640], ub[0x26c0], f16[16,32]
    v.cast      ub[0x36c0], ub[0x1640], f16[16,32], to=f32
    v.rowsum    ub[0x3ec0], ub[0x36c0], f32[16,32]
    v.cast      ub[0x3f00], ub[0x3ec0], f32[16], to=f16
    v.cast      ub[0x1e40], ub[0x3f00], f16[16], to=f32
    set_flag    v -> mte3, 0
    v.sub       ub[0x0040], ub[0x0040], ub[0x1600], f32[16]
    wait_flag   v -> mte3, 0
    wait_cross  mte2 -> mte3, 0, core=0
    mte3.copy   ws_v2c[0x0000], ub[0x1640], f16[16,32]
    v.exp       ub[0x0040], ub[0x0040], f32[16]
    set_cross   mte3 -> mte2, 0, core=0
    v.mul       ub[0x00c0], ub[0x00c0], ub[0x0040], f32[16]
    v.add       ub[0x00c0], ub[0x00c0], ub[0x1e40], f32[16]
    v.copy      ub[0x36c0], ub[0x0040], f32[4,16], src_stride=0
    v.mul       ub[0x0500], ub[0x0500], ub[0x36c0], f32[4,64], src1_stride=0
    wait_flag   mte3 -> v, 2
    wait_cross  fix -> mte2, 2, core=0
    wait_flag   v -> mte2, 2
    mte2.copy   ub[0x2ec0], ws_c2v[0x0800], f32[16,16]
    set_flag    mte2 -> v, 2
    wait_flag   mte2 -> v, 1
    set_flag    v -> mte3, 2
    wait_flag   v -> mte3, 2
    wait_cross  mte2 -> mte3, 1, core=0
    wait_flag   mte2 -> v, 2
    v.add       ub[0x0500], ub[0x0500], ub[0x2ec0], f32[16,16]
    set_cross   mte3 -> mte2, 1, core=0
    v.copy      ub[0x0040], ub[0x1600], f32[16]
    wait_cross  fix -> mte2, 3, core=0
    wait_flag   v -> mte2, 3
    set_flag    mte2 -> v, 3
    wait_flag   mte2 -> v, 3
    wait_flag   mte3 -> v, 4
    v.recip     ub[0x00c0], ub[0x00c0], f32[16]
    v.copy      ub[0x36c0], ub[0x00c0], f32[4,16], src_stride=0
    v.mul       ub[0x0500], ub[0x0500], ub[0x36c0], f32[4,64], src1_stride=0
    v.cast      ub[0x36c0], ub[0x0500], f32[16,16], to=f16
    v.transpose ub[0x1200], ub[0x36c0], f16[16,16]
    set_flag    v -> mte3, 4
    wait_flag   v -> mte3, 4
    mte3.copy   o[0x0400], ub[0x1200], f16[8,16]
    wait_flag   mte3 -> v, 5
    set_flag    v -> mte3, 5
    wait_flag   v -> mte3, 5
.core 2
    v.dup       ub[0x0900], -inf, f32[16]
    v.dup       ub[0x0980], 1.0, f32[16]
    v.dup       ub[0x0a00], 0.0, f32[16,16]
    wait_cross  fix -> mte2, 0, core=0
    set_flag    mte2 -> v, 0
    set_cross   mte2 -> fix, 0, core=0
    wait_flag   mte2 -> v, 0
    set_flag    v -> mte3, 0
    set_flag    v -> mte2, 0
    wait_flag   v -> mte3, 0
    set_flag    mte3 -> v, 0
    set_cross   mte3 -> mte2, 0, core=0
    wait_cross  fix -> mte2, 1, core=0
    mte2.copy   ub[0x2ac0], ws_c2v[0x0400], f16[16,32]
    set_flag    mte2 -> v, 1
    wait_cross  fix -> mte2, 0, core=0
    wait_flag   v -> mte2, 0
    set_flag    mte2 -> v, 0
    set_cross   mte2 -> fix, 0, core=0
    wait_flag   mte2 -> v, 1
    v.tril      ub[0x2ac0], ub[0x2ac0], -inf, f16[16,32], diag=16
    v.rowmax    ub[0x3700], ub[0x2ac0], f16[16,32]
    v.cast      ub[0x36c0], ub[0x3700], f16[16], to=f32
    v.max       ub[0x1e80], ub[0x0900], ub[0x36c0], f32[16]
    v.cast      ub[0x3ac0], ub[0x1e80], f32[16], to=f16
    v.rowbcast  ub[0x36c0], ub[0x3ac0], f16[16,32]
    v.sub       ub[0x2ac0], ub[0x2ac0], ub[0x36c0], f16[16,32]
    v.exp       ub[0x1ec0], ub[0x2ac0], f16[16,32]
    v.sub       ub[0x0900], ub[0x0900], ub[0x1e80], f32[16]
    v.exp       ub[0x0900], ub[0x0900], f32[16]
    v.mul       ub[0x0980], ub[0x0980], ub[0x0900], f32[16]
    v.cast      ub[0x36c0], ub[0x1ec0], f16[16,32], to=f32
    v.rowsum    ub[0x3ec0], ub[0x36c0], f32[16,32]
    v.cast      ub[0x3f00], ub[0x3ec0], f32[16], to=f16
    v.cast      ub[0x36c0], ub[0x3f00], f16[16], to=f32
    v.add       ub[0x0980], ub[0x0980], ub[0x36c0], f32[16]
    v.copy      ub[0x36c0], ub[0x0900], f32[4,16], src_stride=0
    v.mul       ub[0x0a00], ub[0x0a00], ub[0x36c0], f32[4,64], src1_stride=0
    set_flag    v -> mte3, 2
    set_flag    v -> mte2, 1
    wait_flag   v -> mte3, 2
    mte3.copy   ws_v2c[0x0400], ub[0x1ec0], f16[16,32]
    set_flag    mte3 -> v, 2
    set_cross   mte3 -> mte2, 1, core=0
    wait_cross  fix -> mte2, 1, core=0
    wait_flag   v -> mte2, 1
    set_flag    mte2 -> v, 1
    wait_cross  fix -> mte2, 2, core=0
    set_flag    mte2 -> v, 2
    set_cross   mte2 -> fix, 2, core=0
    wait_flag   mte2 -> v, 2
    set_flag    v -> mte2, 2
    v.copy      ub[0x0900], ub[0x1e80], f32[16]
    wait_cross  fix -> mte2, 3, core=0
    mte2.copy   ub[0x32c0], ws_c2v[0x0c00], f32[16,16]
    set_flag    mte2 -> v, 3
    set_cross   mte2 -> fix, 3, core=0
    wait_flag   mte2 -> v, 3
    v.add       ub[0x0a00], ub[0x0a00], ub[0x32c0], f32[16,16]
    set_flag    v -> mte2, 3
    set_flag    v -> mte3, 4
    wait_flag   v -> mte3, 4
    v.recip     ub[0x0980], ub[0x0980], f32[16]
    v.copy      ub[0x36c0], ub[0x0980], f32[4,16], src_stride=0
    v.mul       ub[0x0a00], ub[0x0a00], ub[0x36c0], f32[4,64], src1_stride=0
    set_flag    mte3 -> v, 4
    v.cast      ub[0x36c0], ub[0x0a00], f32[16,16], to=f16
    v.transpose ub[0x1400], ub[0x36c0], f16[16,16]
    set_flag    v -> mte3, 5
    wait_flag   v -> mte3, 5
    mte3.copy   o[0x0200], ub[0x1400], f16[16,16]
    set_flag    mte3 -> v, 5
    v.dup       ub[0x0940], -inf, f32[16]
    v.dup       ub[0x09c0], 1.0, f32[16]
    v.dup       ub[0x0e00], 0.0, f32[16,16]
    wait_flag   mte2 -> v, 0
    set_flag    v -> mte3, 1
    set_flag    v -> mte2, 0
    wait_flag   v -> mte3, 1
    wait_cross  mte2 -> mte3, 0, core=0
    set_cross   mte3 -> mte2, 0, core=0
    wait_cross  fix -> mte2, 0, core=0
    wait_flag   v -> mte2, 0
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 1
    v.dup       ub[0x2ac0], 0.0, f16[16,32]
    v.rowmax    ub[0x3700], ub[0x2ac0], f16[16,32]
    v.cast      ub[0x36c0], ub[0x3700], f16[16], to=f32
    v.max       ub[0x1e80], ub[0x0940], ub[0x36c0], f32[16]
    v.cast      ub[0x3ac0], ub[0x1e80], f32[16], to=f16
    v.rowbcast  ub[0x36c0], ub[0x3ac0], f16[16,32]
    v.sub       ub[0x2ac0], ub[0x2ac0], ub[0x36c0], f16[16,32]
    v.exp       ub[0x22c0], ub[0x2ac0], f16[16,32]
    v.sub       ub[0x0940], ub[0x0940], ub[0x1e80], f32[16]
    v.exp       ub[0x0940], ub[0x0940], f32[16]
    v.mul       ub[0x09c0], ub[0x09c0], ub[0x0940], f32[16]
    v.cast      ub[0x36c0], ub[0x22c0], f16[16,32], to=f32
    v.rowsum    ub[0x3ec0], ub[0x36c0], f32[16,32]
    v.cast      ub[0x3f00], ub[0x3ec0], f32[16], to=f16
    v.cast      ub[0x36c0], ub[0x3f00], f16[16], to=f32
    v.add       ub[0x09c0], ub[0x09c0], ub[0x36c0], f32[16]
    v.copy      ub[0x36c0], ub[0x0940], f32[4,16], src_stride=0
    v.mul       ub[0x0e00], ub[0x0e00], ub[0x36c0], f32[4,64], src1_stride=0
    set_flag    v -> mte3, 3
    set_flag    v -> mte2, 1
    wait_flag   v -> mte3, 3
    wait_cross  mte2 -> mte3, 1, core=0
    mte3.copy   ws_v2c[0x0400], ub[0x22c0], f16[16,32]
    set_cross   mte3 -> mte2, 1, core=0
    wait_cross  fix -> mte2, 1, core=0
    wait_flag   v -> mte2, 1
    set_flag    mte2 -> v, 1
    wait_cross  fix -> mte2, 2, core=0
    wait_flag   v -> mte2, 2
    set_flag    mte2 -> v, 2
    set_cross   mte2 -> fix, 2, core=0
    wait_flag   mte2 -> v, 2
    set_flag    v -> mte2, 2
    v.copy      ub[0x0940], ub[0x1e80], f32[16]
    wait_cross  fix -> mte2, 3, core=0
    wait_flag   v -> mte2, 3
    mte2.copy   ub[0x32c0], ws_c2v[0x0c00], f32[16,16]
    set_flag    mte2 -> v, 3
    set_cross   mte2 -> fix, 3, core=0
    wait_flag   mte2 -> v, 3
    v.add       ub[0x0e00], ub[0x0e00], ub[0x32c0], f32[16,16]
    set_flag    v -> mte2, 3
    wait_flag   mte3 -> v, 0
    wait_flag   mte2 -> v, 0
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    wait_cross  mte2 -> mte3, 0, core=0
    set_cross   mte3 -> mte2, 0, core=0
    wait_flag   mte3 -> v, 2
    wait_cross  fix -> mte2, 2, core=0
    wait_flag   v -> mte2, 2
    set_flag    mte2 -> v, 2
    wait_flag   mte2 -> v, 1
    v.dup       ub[0x2ac0], 0.0, f16[16,32]
    v.tril      ub[0x2ac0], ub[0x2ac0], -inf, f16[16,32], diag=16
    v.rowmax    ub[0x3700], ub[0x2ac0], f16[16,32]
    v.cast      ub[0x36c0], ub[0x3700], f16[16], to=f32
    v.max       ub[0x1e80], ub[0x0940], ub[0x36c0], f32[16]
    v.cast      ub[0x3ac0], ub[0x1e80], f32[16], to=f16
    v.rowbcast  ub[0x36c0], ub[0x3ac0], f16[16,32]
    v.sub       ub[0x2ac0], ub[0x2ac0], ub[0x36c0], f16[16,32]
    v.exp       ub[0x1ec0], ub[0x2ac0], f16[16,32]
    v.sub       ub[0x0940], ub[0x0940], ub[0x1e80], f32[16]
    v.exp       ub[0x0940], ub[0x0940], f32[16]
    v.mul       ub[0x09c0], ub[0x09c0], ub[0x0940], f32[16]
    v.cast      ub[0x36c0], ub[0x1ec0], f16[16,32], to=f32
    v.rowsum    ub[0x3ec0], ub[0x36c0], f32[16,32]
    v.cast      ub[0x3f00], ub[0x3ec0], f32[16], to=f16
    v.cast      ub[0x36c0], ub[0x3f00], f16[16], to=f32
    v.add       ub[0x09c0], ub[0x09c0], ub[0x36c0], f32[16]
    v.copy      ub[0x36c0], ub[0x0940], f32[4,16], src_stride=0
    v.mul       ub[0x0e00], ub[0x0e00], ub[0x36c0], f32[4,64], src1_stride=0
    set_flag    v -> mte3, 2
    wait_flag   v -> mte3, 2
    wait_cross  mte2 -> mte3, 1, core=0
    mte3.copy   ws_v2c[0x0400], ub[0x1ec0], f16[16,32]
    wait_flag   mte2 -> v, 2
    set_cross   mte3 -> mte2, 1, core=0
    v.copy      ub[0x0940], ub[0x1e80], f32[16]
    wait_cross  fix -> mte2, 3, core=0
    wait_flag   v -> mte2, 3
    mte2.copy   ub[0x32c0], ws_c2v[0x0c00], f32[16,16]
    set_flag    mte2 -> v, 3
    wait_flag   mte2 -> v, 3
    v.add       ub[0x0e00], ub[0x0e00], ub[0x32c0], f32[16,16]
    wait_flag   mte3 -> v, 4
    set_flag    v -> mte3, 4
    wait_flag   v -> mte3, 4
    wait_flag   mte3 -> v, 5
    v.recip     ub[0x09c0], ub[0x09c0], f32[16]
    v.copy      ub[0x36c0], ub[0x09c0], f32[4,16], src_stride=0
    v.mul       ub[0x0e00], ub[0x0e00], ub[0x36c0], f32[4,64], src1_stride=0
    v.cast      ub[0x36c0], ub[0x0e00], f32[16,16], to=f16
    v.transpose ub[0x1400], ub[0x36c0], f16[16,16]
    set_flag    v -> mte3, 5
    wait_flag   v -> mte3, 5
