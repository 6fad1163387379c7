; One 64x64x64 matmul tile through the whole Cube data path:
;   GM --MTE2--> L1 --MTE1--> L0A/L0B --CUBE (mmad)--> L0C --FIXPIPE (f32->f16)--> GM
; c = (a @ b) in f16, accumulated in f32.
.chip edu
.tensor a f16[64,64] in
.tensor b f16[64,64] in
.tensor c f16[64,64] out
.core 0
    mte2.copy   l1[0x0000], a[0x0000], f16[64,64]
    mte2.copy   l1[0x2000], b[0x0000], f16[64,64]
    set_flag    mte2 -> mte1, 0
    wait_flag   mte2 -> mte1, 0
    mte1.copy   l0a[0x0000], l1[0x0000], f16[64,64]
    mte1.copy   l0b[0x0000], l1[0x2000], f16[64,64]
    set_flag    mte1 -> cube, 0
    wait_flag   mte1 -> cube, 0
    mmad        l0c[0x0000], l0a[0x0000], l0b[0x0000], f16, m=64, k=64, n=64, init
    set_flag    cube -> fix, 0
    wait_flag   cube -> fix, 0
    fixpipe     c[0x0000], l0c[0x0000], f32[64,64], to=f16
