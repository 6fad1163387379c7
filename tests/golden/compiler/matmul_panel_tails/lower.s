; matmul 100x70x90: c[m,n] = Σ_k a[m,k]·b[k,n]
; schedule: tile m=32,n=32,k=32,k0=16 · order m,n,k · buffers 2 · prefetch 1 · 1 core · panel a
; compiled by dsasim for chip edu; GM traffic 82,400 B expected
.chip edu
.tensor a f16[100,90] in
.tensor b f16[90,70] in
.tensor c f16[100,70] out
.core 0
    mte2.copy   l1[0x0000], a[0x0000], f16[32,32], src_stride=90
    mte2.copy   l1[0x0800], a[0x0040], f16[32,32], src_stride=90
    mte2.copy   l1[0x1000], a[0x0080], f16[32,26], src_stride=90
    set_flag    mte2 -> mte1, 2
    mte2.copy   l1[0x1800], b[0x0000], f16[32,32], src_stride=70
    wait_flag   mte2 -> mte1, 2
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x2000], b[0x1180], f16[32,32], src_stride=70
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    set_flag    mte2 -> mte1, 1
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 0
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x2300], f16[26,32], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32
    set_flag    mte2 -> mte1, 0
    mte1.copy   l0b[0x0400], l1[0x2400], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x0040], f16[32,32], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x1000], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x1020], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[10,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=10, n=32
    set_flag    mte1 -> mte2, 0
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x11c0], f16[32,32], src_stride=70
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x0000], l0c[0x0000], f32[32,32], to=f16, dst_stride=70
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    set_flag    fix -> cube, 0
    set_flag    mte2 -> mte1, 0
    mte1.copy   l0b[0x0400], l1[0x2400], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x2340], f16[26,32], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32
    set_flag    mte2 -> mte1, 1
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 0
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x0080], f16[32,6], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x1000], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x1020], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32
    mte1.copy   l0b[0x0400], l1[0x2400], f16[10,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=10, n=32
    set_flag    mte1 -> mte2, 1
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x1200], f16[32,6], src_stride=70
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c[0x0040], l0c[0x1000], f32[32,32], to=f16, dst_stride=70
    wait_flag   fix -> cube, 0
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,6]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=6, init
    set_flag    fix -> cube, 1
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0400], l1[0x18c0], f16[16,6]
    set_flag    mte2 -> mte1, 1
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=6
    set_flag    mte1 -> mte2, 0
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x2380], f16[26,6], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,6]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=6
    set_flag    mte2 -> mte1, 0
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0400], l1[0x20c0], f16[16,6]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=6
    set_flag    mte1 -> mte2, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x0000], f16[32,32], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x1000], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,6]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x1020], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=6
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0400], l1[0x18c0], f16[10,6]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=10, n=6
    set_flag    mte1 -> mte2, 0
    set_flag    mte1 -> mte2, 2
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x0080], l0c[0x0000], f32[32,6], to=f16, dst_stride=70
    wait_flag   fix -> cube, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x1180], f16[32,32], src_stride=70
    set_flag    fix -> cube, 0
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 2
    mte2.copy   l1[0x0000], a[0x1680], f16[32,32], src_stride=90
    mte2.copy   l1[0x0800], a[0x16c0], f16[32,32], src_stride=90
    mte2.copy   l1[0x1000], a[0x1700], f16[32,26], src_stride=90
    set_flag    mte2 -> mte1, 2
    wait_flag   mte2 -> mte1, 2
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x2400], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x2300], f16[26,32], src_stride=70
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    set_flag    cube -> mte1, 1
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x0040], f16[32,32], src_stride=70
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x1000], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x1020], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32
    set_flag    mte2 -> mte1, 0
    mte1.copy   l0b[0x0400], l1[0x2400], f16[10,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=10, n=32
    set_flag    mte1 -> mte2, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x11c0], f16[32,32], src_stride=70
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c[0x1180], l0c[0x1000], f32[32,32], to=f16, dst_stride=70
    wait_flag   fix -> cube, 0
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte2 -> mte1, 1
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 0
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x2340], f16[26,32], src_stride=70
    set_flag    fix -> cube, 1
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,32]
    set_flag    mte2 -> mte1, 0
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32
    mte1.copy   l0b[0x0400], l1[0x2400], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x0080], f16[32,6], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x1000], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x1020], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[10,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=10, n=32
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x11c0], l0c[0x0000], f32[32,32], to=f16, dst_stride=70
    wait_flag   fix -> cube, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x1200], f16[32,6], src_stride=70
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,6]
    set_flag    fix -> cube, 0
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=6, init
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0400], l1[0x20c0], f16[16,6]
    set_flag    mte2 -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=6
    set_flag    mte1 -> mte2, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x2380], f16[26,6], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,6]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=6
    set_flag    mte2 -> mte1, 1
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0400], l1[0x18c0], f16[16,6]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=6
    set_flag    mte1 -> mte2, 0
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x0000], f16[32,32], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x1000], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,6]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x1020], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=6
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0400], l1[0x20c0], f16[10,6]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=10, n=6
    set_flag    mte1 -> mte2, 1
    set_flag    mte1 -> mte2, 2
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c[0x1200], l0c[0x1000], f32[32,6], to=f16, dst_stride=70
    wait_flag   fix -> cube, 0
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x1180], f16[32,32], src_stride=70
    set_flag    fix -> cube, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 2
    mte2.copy   l1[0x0000], a[0x2d00], f16[32,32], src_stride=90
    mte2.copy   l1[0x0800], a[0x2d40], f16[32,32], src_stride=90
    mte2.copy   l1[0x1000], a[0x2d80], f16[32,26], src_stride=90
    set_flag    mte2 -> mte1, 2
    wait_flag   mte2 -> mte1, 2
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 0
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x2300], f16[26,32], src_stride=70
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    set_flag    cube -> mte1, 1
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32
    mte1.copy   l0b[0x0400], l1[0x2400], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x0040], f16[32,32], src_stride=70
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x1000], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x1020], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32
    set_flag    mte2 -> mte1, 1
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[10,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=10, n=32
    set_flag    mte1 -> mte2, 0
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x11c0], f16[32,32], src_stride=70
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x2300], l0c[0x0000], f32[32,32], to=f16, dst_stride=70
    wait_flag   fix -> cube, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x2400], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte2 -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x2340], f16[26,32], src_stride=70
    set_flag    fix -> cube, 0
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte2 -> mte1, 1
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=32
    set_flag    mte1 -> mte2, 0
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x0080], f16[32,6], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x1000], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x1020], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=32
    mte1.copy   l0b[0x0400], l1[0x2400], f16[10,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=32, k=10, n=32
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c[0x2340], l0c[0x1000], f32[32,32], to=f16, dst_stride=70
    wait_flag   fix -> cube, 0
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x1200], f16[32,6], src_stride=70
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,6]
    set_flag    fix -> cube, 1
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=6, init
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0400], l1[0x18c0], f16[16,6]
    set_flag    mte2 -> mte1, 1
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=6
    set_flag    mte1 -> mte2, 0
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x2380], f16[26,6], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,6]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=6
    set_flag    mte2 -> mte1, 0
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0400], l1[0x20c0], f16[16,6]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=16, n=6
    set_flag    mte1 -> mte2, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x0000], f16[32,32], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x1000], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,6]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x1020], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=6
    set_flag    cube -> mte1, 0
    mte1.copy   l0b[0x0400], l1[0x18c0], f16[10,6]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=32, k=10, n=6
    set_flag    mte1 -> mte2, 0
    set_flag    mte1 -> mte2, 2
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x2380], l0c[0x0000], f32[32,6], to=f16, dst_stride=70
    wait_flag   fix -> cube, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x1180], f16[32,32], src_stride=70
    set_flag    fix -> cube, 0
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 2
    mte2.copy   l1[0x0000], a[0x4380], f16[4,32], src_stride=90
    mte2.copy   l1[0x0800], a[0x43c0], f16[4,32], src_stride=90
    mte2.copy   l1[0x1000], a[0x4400], f16[4,26], src_stride=90
    set_flag    mte2 -> mte1, 2
    wait_flag   mte2 -> mte1, 2
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[4,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[4,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x2400], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=4, k=16, n=32
    set_flag    mte1 -> mte2, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x2300], f16[26,32], src_stride=70
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[4,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    cube -> mte1, 1
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[4,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=32
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=4, k=16, n=32
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x0040], f16[32,32], src_stride=70
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x1000], f16[4,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x1020], f16[4,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=32
    mte1.copy   l0b[0x0400], l1[0x2400], f16[10,32]
    set_flag    cube -> mte1, 0
    set_flag    mte2 -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=4, k=10, n=32
    set_flag    mte1 -> mte2, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x11c0], f16[32,32], src_stride=70
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c[0x3480], l0c[0x1000], f32[4,32], to=f16, dst_stride=70
    wait_flag   fix -> cube, 0
    set_flag    fix -> cube, 1
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[4,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[4,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=32, init
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte2 -> mte1, 1
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=4, k=16, n=32
    set_flag    mte1 -> mte2, 0
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x2340], f16[26,32], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[4,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,32]
    set_flag    mte2 -> mte1, 0
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[4,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=32
    mte1.copy   l0b[0x0400], l1[0x2400], f16[16,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=4, k=16, n=32
    set_flag    mte1 -> mte2, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x0080], f16[32,6], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x1000], f16[4,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,32]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x1020], f16[4,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=32
    mte1.copy   l0b[0x0400], l1[0x1c00], f16[10,32]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0400], f16, m=4, k=10, n=32
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x34c0], l0c[0x0000], f32[4,32], to=f16, dst_stride=70
    wait_flag   fix -> cube, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x1800], b[0x1200], f16[32,6], src_stride=70
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[4,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,6]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[4,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=6, init
    mte1.copy   l0b[0x0400], l1[0x20c0], f16[16,6]
    set_flag    cube -> mte1, 0
    set_flag    mte2 -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=4, k=16, n=6
    set_flag    mte1 -> mte2, 1
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x2000], b[0x2380], f16[26,6], src_stride=70
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[4,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1800], f16[16,6]
    set_flag    mte2 -> mte1, 1
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[4,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=6
    mte1.copy   l0b[0x0400], l1[0x18c0], f16[16,6]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=4, k=16, n=6
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x1000], f16[4,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x2000], f16[16,6]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x1020], f16[4,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=6
    mte1.copy   l0b[0x0400], l1[0x20c0], f16[10,6]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0400], l0b[0x0400], f16, m=4, k=10, n=6
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c[0x3500], l0c[0x1000], f32[4,6], to=f16, dst_stride=70
