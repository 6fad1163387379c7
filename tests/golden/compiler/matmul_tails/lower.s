; matmul 100x70x90: c[m,n] = Σ_k a[m,k]·b[k,n]
; schedule: tile m=32,n=48,k=32,k0=16 · order m,n,k · buffers 2 · prefetch 1 · 1 core
; compiled by dsasim for chip edu; GM traffic 100,400 B expected
.chip edu
.tensor a f16[100,90] in
.tensor b f16[90,70] in
.tensor c f16[100,70] out
.core 0
    mte2.copy   l1[0x0000], a[0x0000], f16[32,32], src_stride=90
    mte2.copy   l1[0x1000], b[0x0000], f16[32,48], src_stride=70
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x0800], a[0x0040], f16[32,32], src_stride=90
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,48]
    set_flag    mte1 -> cube, 0
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=48, init
    mte2.copy   l1[0x1c00], b[0x1180], f16[32,48], src_stride=70
    mte1.copy   l0b[0x0600], l1[0x1600], f16[16,48]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0600], f16, m=32, k=16, n=48
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x0080], f16[32,26], src_stride=90
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1c00], f16[16,48]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=48
    mte2.copy   l1[0x1000], b[0x2300], f16[26,48], src_stride=70
    mte1.copy   l0b[0x0600], l1[0x2200], f16[16,48]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0600], f16, m=32, k=16, n=48
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a[0x0000], f16[32,32], src_stride=90
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,48]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=48
    mte2.copy   l1[0x1c00], b[0x0060], f16[32,22], src_stride=70
    mte1.copy   l0b[0x0600], l1[0x1600], f16[10,48]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0600], f16, m=32, k=10, n=48
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x0000], l0c[0x0000], f32[32,48], to=f16, dst_stride=70
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x0040], f16[32,32], src_stride=90
    set_flag    fix -> cube, 0
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1c00], f16[16,22]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1800], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=22, init
    mte1.copy   l0b[0x0600], l1[0x1ec0], f16[16,22]
    set_flag    cube -> mte1, 0
    mte2.copy   l1[0x1000], b[0x11e0], f16[32,22], src_stride=70
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1800], l0a[0x0400], l0b[0x0600], f16, m=32, k=16, n=22
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a[0x0080], f16[32,26], src_stride=90
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,22]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1800], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=22
    mte1.copy   l0b[0x0600], l1[0x12c0], f16[16,22]
    set_flag    cube -> mte1, 0
    mte2.copy   l1[0x1c00], b[0x2360], f16[26,22], src_stride=70
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1800], l0a[0x0400], l0b[0x0600], f16, m=32, k=16, n=22
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x1680], f16[32,32], src_stride=90
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1c00], f16[16,22]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1800], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=22
    mte1.copy   l0b[0x0600], l1[0x1ec0], f16[10,22]
    set_flag    cube -> mte1, 0
    mte2.copy   l1[0x1000], b[0x0000], f16[32,48], src_stride=70
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1800], l0a[0x0400], l0b[0x0600], f16, m=32, k=10, n=22
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c[0x0060], l0c[0x1800], f32[32,22], to=f16, dst_stride=70
    wait_flag   fix -> cube, 0
    set_flag    fix -> cube, 1
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a[0x16c0], f16[32,32], src_stride=90
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,48]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=48, init
    mte2.copy   l1[0x1c00], b[0x1180], f16[32,48], src_stride=70
    mte1.copy   l0b[0x0600], l1[0x1600], f16[16,48]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0600], f16, m=32, k=16, n=48
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x1700], f16[32,26], src_stride=90
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1c00], f16[16,48]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=48
    mte2.copy   l1[0x1000], b[0x2300], f16[26,48], src_stride=70
    mte1.copy   l0b[0x0600], l1[0x2200], f16[16,48]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0600], f16, m=32, k=16, n=48
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a[0x1680], f16[32,32], src_stride=90
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,48]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=48
    mte2.copy   l1[0x1c00], b[0x0060], f16[32,22], src_stride=70
    mte1.copy   l0b[0x0600], l1[0x1600], f16[10,48]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0600], f16, m=32, k=10, n=48
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x1180], l0c[0x0000], f32[32,48], to=f16, dst_stride=70
    wait_flag   fix -> cube, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x16c0], f16[32,32], src_stride=90
    set_flag    fix -> cube, 0
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1c00], f16[16,22]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1800], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=22, init
    mte1.copy   l0b[0x0600], l1[0x1ec0], f16[16,22]
    set_flag    cube -> mte1, 0
    mte2.copy   l1[0x1000], b[0x11e0], f16[32,22], src_stride=70
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1800], l0a[0x0400], l0b[0x0600], f16, m=32, k=16, n=22
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a[0x1700], f16[32,26], src_stride=90
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,22]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1800], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=22
    mte1.copy   l0b[0x0600], l1[0x12c0], f16[16,22]
    set_flag    cube -> mte1, 0
    mte2.copy   l1[0x1c00], b[0x2360], f16[26,22], src_stride=70
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1800], l0a[0x0400], l0b[0x0600], f16, m=32, k=16, n=22
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x2d00], f16[32,32], src_stride=90
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1c00], f16[16,22]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1800], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=22
    mte1.copy   l0b[0x0600], l1[0x1ec0], f16[10,22]
    set_flag    cube -> mte1, 0
    mte2.copy   l1[0x1000], b[0x0000], f16[32,48], src_stride=70
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1800], l0a[0x0400], l0b[0x0600], f16, m=32, k=10, n=22
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c[0x11e0], l0c[0x1800], f32[32,22], to=f16, dst_stride=70
    wait_flag   fix -> cube, 0
    set_flag    fix -> cube, 1
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a[0x2d40], f16[32,32], src_stride=90
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,48]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=48, init
    mte2.copy   l1[0x1c00], b[0x1180], f16[32,48], src_stride=70
    mte1.copy   l0b[0x0600], l1[0x1600], f16[16,48]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0600], f16, m=32, k=16, n=48
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x2d80], f16[32,26], src_stride=90
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1c00], f16[16,48]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=48
    mte2.copy   l1[0x1000], b[0x2300], f16[26,48], src_stride=70
    mte1.copy   l0b[0x0600], l1[0x2200], f16[16,48]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0600], f16, m=32, k=16, n=48
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a[0x2d00], f16[32,32], src_stride=90
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,48]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=48
    mte2.copy   l1[0x1c00], b[0x0060], f16[32,22], src_stride=70
    mte1.copy   l0b[0x0600], l1[0x1600], f16[10,48]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0600], f16, m=32, k=10, n=48
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x2300], l0c[0x0000], f32[32,48], to=f16, dst_stride=70
    wait_flag   fix -> cube, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x2d40], f16[32,32], src_stride=90
    set_flag    fix -> cube, 0
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1c00], f16[16,22]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1800], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=22, init
    mte1.copy   l0b[0x0600], l1[0x1ec0], f16[16,22]
    set_flag    cube -> mte1, 0
    mte2.copy   l1[0x1000], b[0x11e0], f16[32,22], src_stride=70
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1800], l0a[0x0400], l0b[0x0600], f16, m=32, k=16, n=22
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a[0x2d80], f16[32,26], src_stride=90
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,22]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[32,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1800], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=22
    mte1.copy   l0b[0x0600], l1[0x12c0], f16[16,22]
    set_flag    cube -> mte1, 0
    mte2.copy   l1[0x1c00], b[0x2360], f16[26,22], src_stride=70
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1800], l0a[0x0400], l0b[0x0600], f16, m=32, k=16, n=22
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x4380], f16[4,32], src_stride=90
    mte2.copy   l1[0x1000], b[0x0000], f16[32,48], src_stride=70
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[32,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1c00], f16[16,22]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[32,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1800], l0a[0x0000], l0b[0x0000], f16, m=32, k=16, n=22
    mte1.copy   l0b[0x0600], l1[0x1ec0], f16[10,22]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1800], l0a[0x0400], l0b[0x0600], f16, m=32, k=10, n=22
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c[0x2360], l0c[0x1800], f32[32,22], to=f16, dst_stride=70
    wait_flag   fix -> cube, 0
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a[0x43c0], f16[4,32], src_stride=90
    mte2.copy   l1[0x1c00], b[0x1180], f16[32,48], src_stride=70
    set_flag    fix -> cube, 1
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[4,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,48]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[4,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=48, init
    mte1.copy   l0b[0x0600], l1[0x1600], f16[16,48]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0600], f16, m=4, k=16, n=48
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x4400], f16[4,26], src_stride=90
    mte2.copy   l1[0x1000], b[0x2300], f16[26,48], src_stride=70
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[4,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1c00], f16[16,48]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[4,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=48
    mte1.copy   l0b[0x0600], l1[0x2200], f16[16,48]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0600], f16, m=4, k=16, n=48
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a[0x4380], f16[4,32], src_stride=90
    mte2.copy   l1[0x1c00], b[0x0060], f16[32,22], src_stride=70
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[4,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,48]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[4,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=48
    mte1.copy   l0b[0x0600], l1[0x1600], f16[10,48]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0400], l0b[0x0600], f16, m=4, k=10, n=48
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x3480], l0c[0x0000], f32[4,48], to=f16, dst_stride=70
    wait_flag   fix -> cube, 1
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x43c0], f16[4,32], src_stride=90
    mte2.copy   l1[0x1000], b[0x11e0], f16[32,22], src_stride=70
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[4,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1c00], f16[16,22]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[4,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1800], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=22, init
    mte1.copy   l0b[0x0600], l1[0x1ec0], f16[16,22]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1800], l0a[0x0400], l0b[0x0600], f16, m=4, k=16, n=22
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a[0x4400], f16[4,26], src_stride=90
    mte2.copy   l1[0x1c00], b[0x2360], f16[26,22], src_stride=70
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[4,16], src_stride=32
    mte1.copy   l0b[0x0000], l1[0x1000], f16[16,22]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0020], f16[4,16], src_stride=32
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1800], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=22
    mte1.copy   l0b[0x0600], l1[0x12c0], f16[16,22]
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1800], l0a[0x0400], l0b[0x0600], f16, m=4, k=16, n=22
    set_flag    mte2 -> mte1, 1
    set_flag    cube -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0800], f16[4,16], src_stride=26
    mte1.copy   l0b[0x0000], l1[0x1c00], f16[16,22]
    set_flag    mte1 -> cube, 0
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0400], l1[0x0820], f16[4,10], src_stride=26
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1800], l0a[0x0000], l0b[0x0000], f16, m=4, k=16, n=22
    mte1.copy   l0b[0x0600], l1[0x1ec0], f16[10,22]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1800], l0a[0x0400], l0b[0x0600], f16, m=4, k=10, n=22
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c[0x34e0], l0c[0x1800], f32[4,22], to=f16, dst_stride=70
