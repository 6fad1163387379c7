.chip edu
.tensor a f16[64,512] in
.tensor b f16[512,64] in
.tensor c f16[64,64] out
.core 0
    set_flag    mte1 -> mte2, 0
    set_flag    cube -> mte1, 0
    set_flag    mte1 -> mte2, 1
    set_flag    cube -> mte1, 1
    set_flag    fix -> cube, 0
    wait_flag   fix -> cube, 0
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x0000], f16[64,64], src_stride=512
    mte2.copy   l1[0x2000], b[0x0000], f16[64,64]
    set_flag    mte2 -> mte1, 0
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[4096]
    mte1.copy   l0b[0x0000], l1[0x2000], f16[4096]
    set_flag    mte1 -> mte2, 0
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=64, k=64, n=64, init
    set_flag    cube -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x4000], a[0x0080], f16[64,64], src_stride=512
    mte2.copy   l1[0x6000], b[0x2000], f16[64,64]
    set_flag    mte2 -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x2000], l1[0x4000], f16[4096]
    mte1.copy   l0b[0x2000], l1[0x6000], f16[4096]
    set_flag    mte1 -> mte2, 1
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x2000], l0b[0x2000], f16, m=64, k=64, n=64
    set_flag    cube -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x0100], f16[64,64], src_stride=512
    mte2.copy   l1[0x2000], b[0x4000], f16[64,64]
    set_flag    mte2 -> mte1, 0
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[4096]
    mte1.copy   l0b[0x0000], l1[0x2000], f16[4096]
    set_flag    mte1 -> mte2, 0
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=64, k=64, n=64
    set_flag    cube -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x4000], a[0x0180], f16[64,64], src_stride=512
    mte2.copy   l1[0x6000], b[0x6000], f16[64,64]
    set_flag    mte2 -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x2000], l1[0x4000], f16[4096]
    mte1.copy   l0b[0x2000], l1[0x6000], f16[4096]
    set_flag    mte1 -> mte2, 1
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x2000], l0b[0x2000], f16, m=64, k=64, n=64
    set_flag    cube -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x0200], f16[64,64], src_stride=512
    mte2.copy   l1[0x2000], b[0x8000], f16[64,64]
    set_flag    mte2 -> mte1, 0
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[4096]
    mte1.copy   l0b[0x0000], l1[0x2000], f16[4096]
    set_flag    mte1 -> mte2, 0
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=64, k=64, n=64
    set_flag    cube -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x4000], a[0x0280], f16[64,64], src_stride=512
    mte2.copy   l1[0x6000], b[0xa000], f16[64,64]
    set_flag    mte2 -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x2000], l1[0x4000], f16[4096]
    mte1.copy   l0b[0x2000], l1[0x6000], f16[4096]
    set_flag    mte1 -> mte2, 1
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x2000], l0b[0x2000], f16, m=64, k=64, n=64
    set_flag    cube -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a[0x0300], f16[64,64], src_stride=512
    mte2.copy   l1[0x2000], b[0xc000], f16[64,64]
    set_flag    mte2 -> mte1, 0
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[4096]
    mte1.copy   l0b[0x0000], l1[0x2000], f16[4096]
    set_flag    mte1 -> mte2, 0
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=64, k=64, n=64
    set_flag    cube -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x4000], a[0x0380], f16[64,64], src_stride=512
    mte2.copy   l1[0x6000], b[0xe000], f16[64,64]
    set_flag    mte2 -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x2000], l1[0x4000], f16[4096]
    mte1.copy   l0b[0x2000], l1[0x6000], f16[4096]
    set_flag    mte1 -> mte2, 1
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x2000], l0b[0x2000], f16, m=64, k=64, n=64
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x0000], l0c[0x0000], f32[64,64], to=f16
    set_flag    fix -> cube, 0
    wait_flag   fix -> cube, 0
    wait_flag   mte1 -> mte2, 0
    wait_flag   cube -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    wait_flag   cube -> mte1, 1
