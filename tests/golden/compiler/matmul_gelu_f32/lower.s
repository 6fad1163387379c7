; matmul 48x40x32: c[m,n] = gelu(Σ_k a[m,k]·b[k,n])
; schedule: tile m=32,n=32,k=32,k0=16 · order m,n,k · buffers a=3,b=3,c=2 · prefetch 2 · 1 core
; compiled by dsasim for chip edu; GM traffic 15,872 B expected
.chip edu
.tensor a f16[48,32] in
.tensor b f16[32,40] in
.tensor c f32[48,40] out
.core 0
    mte2.copy   l1[0x0000], a[0x0000], f16[32,32]
    set_flag    mte2 -> mte1, 3
    mte2.copy   l1[0x0800], a[0x0800], f16[16,32]
    set_flag    mte2 -> mte1, 4
    mte2.copy   l1[0x1800], b[0x0000], f16[32,32], src_stride=40
    wait_flag   mte2 -> mte1, 3
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x2000], b[0x0040], f16[32,8], src_stride=40
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    set_flag    mte2 -> mte1, 1
    mte2.copy   l1[0x2800], b[0x0000], f16[32,32], src_stride=40
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     ub[0x0000], l0c[0x0000], f32[32,32]
    set_flag    fix -> cube, 0
    set_flag    fix -> v, 0
    wait_flag   fix -> v, 0
    v.mul       ub[0x4000], ub[0x0000], ub[0x0000], f32[32,32]
    wait_flag   mte2 -> mte1, 1
    mte1.copy   l0a[0x0800], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0800], l1[0x2000], f16[16,8]
    set_flag    mte1 -> cube, 2
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x1000], l0a[0x0800], l0b[0x0800], f16, m=32, k=16, n=8, init
    v.muls      ub[0x4000], ub[0x4000], 0.044715, f32[32,32]
    set_flag    cube -> mte1, 2
    mte1.copy   l0b[0x0000], l1[0x2100], f16[16,8]
    set_flag    mte2 -> mte1, 2
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x0040], f16[32,8], src_stride=40
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=8
    wait_flag   mte2 -> mte1, 4
    v.adds      ub[0x4000], ub[0x4000], 1.0, f32[32,32]
    set_flag    cube -> mte1, 0
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     ub[0x1000], l0c[0x1000], f32[32,8]
    wait_flag   fix -> cube, 0
    set_flag    fix -> cube, 1
    set_flag    fix -> v, 1
    v.mul       ub[0x4000], ub[0x4000], ub[0x0000], f32[32,32]
    v.muls      ub[0x4000], ub[0x4000], -1.5957691216057308, f32[32,32]
    wait_flag   mte2 -> mte1, 2
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0800], f16[16,16], src_stride=32
    mte1.copy   l0b[0x0400], l1[0x2800], f16[16,32]
    v.exp       ub[0x4000], ub[0x4000], f32[32,32]
    set_flag    mte1 -> cube, 1
    wait_flag   cube -> mte1, 2
    mte1.copy   l0a[0x0800], l1[0x0820], f16[16,16], src_stride=32
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=16, k=16, n=32, init
    mte1.copy   l0b[0x0800], l1[0x2c00], f16[16,32]
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 0
    set_flag    mte1 -> cube, 2
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x0000], l0a[0x0800], l0b[0x0800], f16, m=16, k=16, n=32
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    wait_flag   fix -> cube, 1
    v.adds      ub[0x4000], ub[0x4000], 1.0, f32[32,32]
    v.recip     ub[0x4000], ub[0x4000], f32[32,32]
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[16,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,8]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[16,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=16, k=16, n=8, init
    v.mul       ub[0x2000], ub[0x0000], ub[0x4000], f32[32,32]
    mte1.copy   l0b[0x0400], l1[0x1900], f16[16,8]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=16, k=16, n=8
    set_flag    cube -> fix, 1
    set_flag    v -> fix, 0
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   c[0x0000], ub[0x2000], f32[32,32], dst_stride=40
    wait_flag   fix -> v, 1
    v.mul       ub[0x4000], ub[0x1000], ub[0x1000], f32[32,8]
    wait_flag   v -> fix, 0
    fixpipe     ub[0x0000], l0c[0x0000], f32[16,32]
    v.muls      ub[0x4000], ub[0x4000], 0.044715, f32[32,8]
    set_flag    fix -> v, 0
    wait_flag   cube -> fix, 1
    v.adds      ub[0x4000], ub[0x4000], 1.0, f32[32,8]
    v.mul       ub[0x4000], ub[0x4000], ub[0x1000], f32[32,8]
    v.muls      ub[0x4000], ub[0x4000], -1.5957691216057308, f32[32,8]
    v.exp       ub[0x4000], ub[0x4000], f32[32,8]
    v.adds      ub[0x4000], ub[0x4000], 1.0, f32[32,8]
    v.recip     ub[0x4000], ub[0x4000], f32[32,8]
    v.mul       ub[0x3000], ub[0x1000], ub[0x4000], f32[32,8]
    set_flag    v -> fix, 1
    set_flag    v -> mte3, 1
    wait_flag   fix -> v, 0
    wait_flag   v -> fix, 1
    fixpipe     ub[0x1000], l0c[0x1000], f32[16,8]
    set_flag    fix -> v, 1
    set_flag    mte3 -> v, 0
    wait_flag   v -> mte3, 1
    mte3.copy   c[0x0080], ub[0x3000], f32[32,8], dst_stride=40
    wait_flag   mte3 -> v, 0
    v.mul       ub[0x4000], ub[0x0000], ub[0x0000], f32[16,32]
    v.muls      ub[0x4000], ub[0x4000], 0.044715, f32[16,32]
    set_flag    mte3 -> v, 1
    v.adds      ub[0x4000], ub[0x4000], 1.0, f32[16,32]
    v.mul       ub[0x4000], ub[0x4000], ub[0x0000], f32[16,32]
    v.muls      ub[0x4000], ub[0x4000], -1.5957691216057308, f32[16,32]
    v.exp       ub[0x4000], ub[0x4000], f32[16,32]
    v.adds      ub[0x4000], ub[0x4000], 1.0, f32[16,32]
    v.recip     ub[0x4000], ub[0x4000], f32[16,32]
    v.mul       ub[0x2000], ub[0x0000], ub[0x4000], f32[16,32]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   c[0x1400], ub[0x2000], f32[16,32], dst_stride=40
    wait_flag   fix -> v, 1
    wait_flag   mte3 -> v, 1
    v.mul       ub[0x4000], ub[0x1000], ub[0x1000], f32[16,8]
    v.muls      ub[0x4000], ub[0x4000], 0.044715, f32[16,8]
    v.adds      ub[0x4000], ub[0x4000], 1.0, f32[16,8]
    v.mul       ub[0x4000], ub[0x4000], ub[0x1000], f32[16,8]
    v.muls      ub[0x4000], ub[0x4000], -1.5957691216057308, f32[16,8]
    v.exp       ub[0x4000], ub[0x4000], f32[16,8]
    v.adds      ub[0x4000], ub[0x4000], 1.0, f32[16,8]
    v.recip     ub[0x4000], ub[0x4000], f32[16,8]
    v.mul       ub[0x3000], ub[0x1000], ub[0x4000], f32[16,8]
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   c[0x1480], ub[0x3000], f32[16,8], dst_stride=40
