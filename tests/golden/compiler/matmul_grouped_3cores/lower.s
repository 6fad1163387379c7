; matmul 96x96x32: c[m,n] = Σ_k a[m,k]·b[k,n]
; schedule: tile m=32,n=32,k=32,k0=16 · order m,n,k · buffers 2 · prefetch 1 · 3 cores · parallel m,n · group 2
; compiled by dsasim for chip edu; GM traffic 55,296 B expected
.chip edu
.tensor a f16[96,32] in
.tensor b f16[32,96] in
.tensor c f16[96,96] out
.core 0
    mte2.copy   l1[0x0000], a[0x0000], f16[32,32]
    mte2.copy   l1[0x1000], b[0x0000], f16[32,32], src_stride=96
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x0800], a[0x0800], f16[32,32]
    mte2.copy   l1[0x1800], b[0x0040], f16[32,32], src_stride=96
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,32]
    set_flag    mte1 -> cube, 0
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x1400], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x0000], l0c[0x0000], f32[32,32], to=f16, dst_stride=96
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x1000], f16[32,32]
    mte2.copy   l1[0x1000], b[0x0000], f16[32,32], src_stride=96
    set_flag    fix -> cube, 0
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c[0x1840], l0c[0x1000], f32[32,32], to=f16, dst_stride=96
    wait_flag   fix -> cube, 0
    set_flag    mte2 -> mte1, 0
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x1400], f16[16,32]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x3000], l0c[0x0000], f32[32,32], to=f16, dst_stride=96
.core 1
    mte2.copy   l1[0x0000], a[0x0800], f16[32,32]
    mte2.copy   l1[0x1000], b[0x0000], f16[32,32], src_stride=96
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x0800], a[0x0000], f16[32,32]
    mte2.copy   l1[0x1800], b[0x0080], f16[32,32], src_stride=96
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,32]
    set_flag    mte1 -> cube, 0
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x1400], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x1800], l0c[0x0000], f32[32,32], to=f16, dst_stride=96
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x1000], f16[32,32]
    mte2.copy   l1[0x1000], b[0x0040], f16[32,32], src_stride=96
    set_flag    fix -> cube, 0
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c[0x0080], l0c[0x1000], f32[32,32], to=f16, dst_stride=96
    wait_flag   fix -> cube, 0
    set_flag    mte2 -> mte1, 0
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x1400], f16[16,32]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x3040], l0c[0x0000], f32[32,32], to=f16, dst_stride=96
.core 2
    mte2.copy   l1[0x0000], a[0x0000], f16[32,32]
    mte2.copy   l1[0x1000], b[0x0040], f16[32,32], src_stride=96
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x0800], a[0x0800], f16[32,32]
    mte2.copy   l1[0x1800], b[0x0080], f16[32,32], src_stride=96
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,32]
    set_flag    mte1 -> cube, 0
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x1400], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x0040], l0c[0x0000], f32[32,32], to=f16, dst_stride=96
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x1000], f16[32,32]
    mte2.copy   l1[0x1000], b[0x0080], f16[32,32], src_stride=96
    set_flag    fix -> cube, 0
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c[0x1880], l0c[0x1000], f32[32,32], to=f16, dst_stride=96
    wait_flag   fix -> cube, 0
    set_flag    mte2 -> mte1, 0
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x1400], f16[16,32]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x3080], l0c[0x0000], f32[32,32], to=f16, dst_stride=96
