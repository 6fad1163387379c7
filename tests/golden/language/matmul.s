; matmul_kernel: tile-language kernel, grid 4x1x1, 4 programs on 1 core
.chip edu
.tensor a_ptr f16[1920] in
.tensor b_ptr f16[1920] in
.tensor c_ptr f16[2304] inout
.core 0
    mte2.copy   l1[0x0000], a_ptr[0x0000], f16[32,32], src_stride=40
    mte2.copy   l1[0x1000], b_ptr[0x0000], f16[32,32], src_stride=48
    set_flag    mte2 -> mte1, 0
    mte2.copy   l1[0x0800], a_ptr[0x0040], f16[32,8], src_stride=40, dst_stride=32
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,32]
    mte1.copy   l0b[0x0000], l1[0x1000], f16[32,32]
    set_flag    mte1 -> mte2, 0
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=32, n=32, init
    mte2.copy   l1[0x1800], b_ptr[0x0c00], f16[8,32], src_stride=48
    set_flag    cube -> mte1, 0
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a_ptr[0x0a00], f16[16,32], src_stride=40
    mte2.copy   l1[0x0400], a_ptr[0x0000], f16[16,32], src_stride=40
    wait_flag   mte2 -> mte1, 1
    mte1.copy   l0a[0x0800], l1[0x0800], f16[32,8], src_stride=32
    mte1.copy   l0b[0x0800], l1[0x1800], f16[8,32]
    set_flag    mte1 -> mte2, 1
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0800], l0b[0x0800], f16, m=32, k=8, n=32
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c_ptr[0x0000], l0c[0x0000], f32[32,32], to=f16, dst_stride=48
    mte2.copy   l1[0x1000], b_ptr[0x0000], f16[32,32], src_stride=48
    set_flag    fix -> cube, 0
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a_ptr[0x0a40], f16[16,8], src_stride=40, dst_stride=32
    mte2.copy   l1[0x0c00], a_ptr[0x0040], f16[16,8], src_stride=40, dst_stride=32
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,32]
    mte1.copy   l0b[0x0000], l1[0x1000], f16[32,32]
    set_flag    mte1 -> mte2, 0
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=32, n=32, init
    set_flag    cube -> mte1, 0
    mte2.copy   l1[0x1800], b_ptr[0x0c00], f16[8,32], src_stride=48
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a_ptr[0x0000], f16[32,32], src_stride=40
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0800], l1[0x0800], f16[32,8], src_stride=32
    mte1.copy   l0b[0x0800], l1[0x1800], f16[8,32]
    set_flag    mte1 -> mte2, 1
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0800], l0b[0x0800], f16, m=32, k=8, n=32
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c_ptr[0x0c00], l0c[0x1000], f32[16,32], to=f16, dst_stride=48
    wait_flag   fix -> cube, 0
    mte2.copy   l1[0x1000], b_ptr[0x0040], f16[32,16], src_stride=48, dst_stride=32
    set_flag    fix -> cube, 1
    mte2.copy   l1[0x1020], b_ptr[0x0000], f16[32,16], src_stride=48, dst_stride=32
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a_ptr[0x0040], f16[32,8], src_stride=40, dst_stride=32
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,32]
    mte1.copy   l0b[0x0000], l1[0x1000], f16[32,32]
    set_flag    mte1 -> mte2, 0
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=32, k=32, n=32, init
    mte2.copy   l1[0x1800], b_ptr[0x0c40], f16[8,16], src_stride=48, dst_stride=32
    set_flag    cube -> mte1, 0
    mte2.copy   l1[0x1820], b_ptr[0x0c00], f16[8,16], src_stride=48, dst_stride=32
    set_flag    mte2 -> mte1, 1
    wait_flag   mte1 -> mte2, 0
    mte2.copy   l1[0x0000], a_ptr[0x0a00], f16[16,32], src_stride=40
    mte2.copy   l1[0x0400], a_ptr[0x0000], f16[16,32], src_stride=40
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0800], l1[0x0800], f16[32,8], src_stride=32
    mte1.copy   l0b[0x0800], l1[0x1800], f16[8,32]
    set_flag    mte1 -> mte2, 1
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x0000], l0a[0x0800], l0b[0x0800], f16, m=32, k=8, n=32
    set_flag    cube -> mte1, 1
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c_ptr[0x0040], l0c[0x0000], f32[32,16], to=f16, src_stride=32, dst_stride=48
    wait_flag   fix -> cube, 1
    mte2.copy   l1[0x1000], b_ptr[0x0040], f16[32,16], src_stride=48, dst_stride=32
    mte2.copy   l1[0x1020], b_ptr[0x0000], f16[32,16], src_stride=48, dst_stride=32
    set_flag    mte2 -> mte1, 0
    wait_flag   mte1 -> mte2, 1
    mte2.copy   l1[0x0800], a_ptr[0x0a40], f16[16,8], src_stride=40, dst_stride=32
    mte2.copy   l1[0x0c00], a_ptr[0x0040], f16[16,8], src_stride=40, dst_stride=32
    wait_flag   mte2 -> mte1, 0
    wait_flag   cube -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[32,32]
    mte1.copy   l0b[0x0000], l1[0x1000], f16[32,32]
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x1000], l0a[0x0000], l0b[0x0000], f16, m=32, k=32, n=32, init
    mte2.copy   l1[0x1800], b_ptr[0x0c40], f16[8,16], src_stride=48, dst_stride=32
    mte2.copy   l1[0x1820], b_ptr[0x0c00], f16[8,16], src_stride=48, dst_stride=32
    set_flag    mte2 -> mte1, 1
    wait_flag   mte2 -> mte1, 1
    wait_flag   cube -> mte1, 1
    mte1.copy   l0a[0x0800], l1[0x0800], f16[32,8], src_stride=32
    mte1.copy   l0b[0x0800], l1[0x1800], f16[8,32]
    set_flag    mte1 -> cube, 1
    wait_flag   mte1 -> cube, 1
    mmad        l0c[0x1000], l0a[0x0800], l0b[0x0800], f16, m=32, k=8, n=32
    set_flag    cube -> fix, 1
    wait_flag   cube -> fix, 1
    fixpipe     c_ptr[0x0c40], l0c[0x1000], f32[16,16], to=f16, src_stride=32, dst_stride=48
