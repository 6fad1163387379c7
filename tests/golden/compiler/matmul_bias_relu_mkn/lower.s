; matmul 64x96x64: c[m,n] = relu(Σ_k a[m,k]·b[k,n] + bias[n])
; schedule: tile m=32,n=32,k=32,k0=32 · order m,k,n · buffers a=3,b=3,bias=3,c=1 · prefetch 2 · 1 core
; compiled by dsasim for chip edu; GM traffic 45,440 B expected
.chip edu
.tensor a f16[64,64] in
.tensor b f16[64,96] in
.tensor bias f16[96] in
.tensor c f16[64,96] out
.core 0
    v.dup       ub[0x0000], 1.0, f16[32]
    mte2.copy   l0b[0x1800], bias[0x0000], f16[32]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   l1[0x3000], ub[0x0000], f16[32]
    set_flag    mte3 -> mte1, 0
    wait_flag   mte3 -> mte1, 0
    mte1.copy   l0a[0x1800], l1[0x3000], f16[32]
    set_flag    mte2 -> cube, 0
    mte2.copy   l0b[0x1a00], bias[0x0040], f16[32]
    set_flag    mte1 -> cube, 6
    wait_flag   mte1 -> cube, 6
    set_flag    mte2 -> cube, 1
    mte2.copy   l0b[0x1c00], bias[0x0080], f16[32]
    set_flag    mte2 -> cube, 2
    wait_flag   mte2 -> cube, 0
    mmad        l0c[0x0000], l0a[0x1800], l0b[0x1800], f16, m=32, k=1, n=32, init
    set_flag    cube -> mte2, 0
    wait_flag   cube -> mte2, 0
    mte2.copy   l0b[0x1800], bias[0x0000], f16[32]
    wait_flag   mte2 -> cube, 1
    mmad        l0c[0x1000], l0a[0x1800], l0b[0x1a00], f16, m=32, k=1, n=32, init
    set_flag    mte2 -> cube, 0
    set_flag    cube -> mte2, 1
    wait_flag   cube -> mte2, 1
    mte2.copy   l0b[0x1a00], bias[0x0040], f16[32]
    wait_flag   mte2 -> cube, 2
    mmad        l0c[0x2000], l0a[0x1800], l0b[0x1c00], f16, m=32, k=1, n=32, init
    set_flag    mte2 -> cube, 1
    set_flag    cube -> mte2, 2
    wait_flag   cube -> mte2, 2
    mte2.copy   l0b[0x1c00], bias[0x0080], f16[32]
    set_flag    mte2 -> cube, 2
    mte2.copy   l1[0x0000], a[0x0000], f16[32,32], src_stride=64
    set_flag    mte2 -> mte1, 3
    mte2.copy   l1[0x0800], a[0x0040], f16[32,32], src_stride=64
    wait_flag   mte2 -> mte1, 3
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,32]
    set_flag    mte1 -> mte2, 3
    set_flag    mte1 -> cube, 3
    wait_flag   mte1 -> cube, 3
    set_flag    mte2 -> mte1, 4
    mte2.copy   l1[0x1000], a[0x1000], f16[32,32], src_stride=64
    set_flag    mte2 -> mte1, 5
    wait_flag   mte1 -> mte2, 3
    mte2.copy   l1[0x0000], a[0x1040], f16[32,32], src_stride=64
    set_flag    mte2 -> mte1, 3
    mte2.copy   l1[0x1800], b[0x0000], f16[32,32], src_stride=96
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x2000], b[0x0040], f16[32,32], src_stride=96
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0b[0x0000], l1[0x1800], f16[32,32]
    set_flag    mte1 -> mte2, 0
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=32, n=32
    set_flag    cube -> mte1, 0
    set_flag    mte2 -> mte1, 1
    mte2.copy   l1[0x2800], b[0x0080], f16[32,32], src_stride=96
    wait_flag   mte2 -> mte1, 1
    mte1.copy   l0b[0x0800], l1[0x2000], f16[32,32]
    set_flag    mte1 -> mte2, 1
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0800], f16, m=32, k=32, n=32
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 2
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x1800], f16[32,32], src_stride=96
    wait_flag   mte2 -> mte1, 2
    mte1.copy   l0b[0x1000], l1[0x2800], f16[32,32]
    set_flag    mte1 -> mte2, 2
    set_flag    mte1 -> cube, 2
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x2000], l0a[0x0000], l0b[0x1000], f16, m=32, k=32, n=32
    wait_flag   mte2 -> mte1, 4
    mte1.copy   l0a[0x0800], l1[0x0800], f16[32,32]
    set_flag    cube -> mte1, 2
    set_flag    cube -> mte1, 3
    set_flag    mte1 -> cube, 4
    wait_flag   mte1 -> cube, 4
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x1840], f16[32,32], src_stride=96
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0b[0x0000], l1[0x1800], f16[32,32]
    set_flag    mte1 -> mte2, 0
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0800], l0b[0x0000], f16, m=32, k=32, n=32
    set_flag    cube -> mte1, 0
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 2
    mte2.copy   l1[0x2800], b[0x1880], f16[32,32], src_stride=96
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 1
    mte1.copy   l0b[0x0800], l1[0x2000], f16[32,32]
    set_flag    mte1 -> mte2, 1
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0800], l0b[0x0800], f16, m=32, k=32, n=32
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 2
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x0000], f16[32,32], src_stride=96
    wait_flag   mte2 -> mte1, 2
    wait_flag   cube -> mte1, 2
    mte1.copy   l0b[0x1000], l1[0x2800], f16[32,32]
    set_flag    mte1 -> mte2, 2
    set_flag    mte1 -> cube, 2
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x2000], l0a[0x0800], l0b[0x1000], f16, m=32, k=32, n=32
    wait_flag   mte2 -> mte1, 5
    mte1.copy   l0a[0x1000], l1[0x1000], f16[32,32]
    set_flag    cube -> mte1, 2
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x0000], l0c[0x0000], f32[32,32], to=f16, relu, dst_stride=96
    set_flag    mte1 -> cube, 5
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x0040], f16[32,32], src_stride=96
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0b[0x0000], l1[0x1800], f16[32,32]
    set_flag    mte1 -> mte2, 0
    set_flag    mte1 -> cube, 0
    fixpipe     c[0x0040], l0c[0x1000], f32[32,32], to=f16, relu, dst_stride=96
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 2
    mte2.copy   l1[0x2800], b[0x0080], f16[32,32], src_stride=96
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 1
    mte1.copy   l0b[0x0800], l1[0x2000], f16[32,32]
    fixpipe     c[0x0080], l0c[0x2000], f32[32,32], to=f16, relu, dst_stride=96
    set_flag    mte1 -> mte2, 1
    set_flag    mte1 -> cube, 1
    set_flag    mte2 -> mte1, 2
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x1800], f16[32,32], src_stride=96
    wait_flag   mte2 -> mte1, 2
    wait_flag   cube -> mte1, 2
    mte1.copy   l0b[0x1000], l1[0x2800], f16[32,32]
    set_flag    fix -> cube, 0
    set_flag    mte1 -> mte2, 2
    set_flag    mte1 -> cube, 2
    wait_flag   mte2 -> mte1, 3
    wait_flag   cube -> mte1, 3
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,32]
    set_flag    mte1 -> cube, 3
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x1840], f16[32,32], src_stride=96
    wait_flag   fix -> cube, 0
    wait_flag   mte2 -> cube, 0
    mmad        l0c[0x0000], l0a[0x1800], l0b[0x1800], f16, m=32, k=1, n=32, init
    wait_flag   mte2 -> cube, 1
    mmad        l0c[0x1000], l0a[0x1800], l0b[0x1a00], f16, m=32, k=1, n=32, init
    wait_flag   mte2 -> cube, 2
    mmad        l0c[0x2000], l0a[0x1800], l0b[0x1c00], f16, m=32, k=1, n=32, init
    wait_flag   mte1 -> cube, 5
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x1000], l0b[0x0000], f16, m=32, k=32, n=32
    set_flag    cube -> mte1, 0
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x1000], l0b[0x0800], f16, m=32, k=32, n=32
    set_flag    cube -> mte1, 1
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x2000], l0a[0x1000], l0b[0x1000], f16, m=32, k=32, n=32
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0b[0x0000], l1[0x1800], f16[32,32]
    set_flag    cube -> mte1, 2
    wait_flag   mte1 -> cube, 3
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=32, n=32
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 2
    mte2.copy   l1[0x2800], b[0x1880], f16[32,32], src_stride=96
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 1
    mte1.copy   l0b[0x0800], l1[0x2000], f16[32,32]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0800], f16, m=32, k=32, n=32
    set_flag    mte2 -> mte1, 2
    wait_flag   mte2 -> mte1, 2
    wait_flag   cube -> mte1, 2
    mte1.copy   l0b[0x1000], l1[0x2800], f16[32,32]
    set_flag    mte1 -> cube, 2
    wait_flag   mte1 -> cube, 2
    mmad        l0c[0x2000], l0a[0x0000], l0b[0x1000], f16, m=32, k=32, n=32
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x1800], l0c[0x0000], f32[32,32], to=f16, relu, dst_stride=96
    fixpipe     c[0x1840], l0c[0x1000], f32[32,32], to=f16, relu, dst_stride=96
    fixpipe     c[0x1880], l0c[0x2000], f32[32,32], to=f16, relu, dst_stride=96
