#include "textflag.h"

// func dotInt8AVX2(a, b *int8, n int) int32
// n is a positive multiple of 32. Products of two int8 fit int16; VPMADDWD
// sums pairs of them into int32, which holds 2^17 of the largest products.
TEXT ·dotInt8AVX2(SB), NOSPLIT, $0-28
	MOVQ a+0(FP), SI
	MOVQ b+8(FP), DI
	MOVQ n+16(FP), CX
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1

loop:
	VPMOVSXBW (SI), Y2
	VPMOVSXBW (DI), Y3
	VPMADDWD  Y2, Y3, Y2
	VPADDD    Y2, Y0, Y0
	VPMOVSXBW 16(SI), Y4
	VPMOVSXBW 16(DI), Y5
	VPMADDWD  Y4, Y5, Y4
	VPADDD    Y4, Y1, Y1
	ADDQ      $32, SI
	ADDQ      $32, DI
	SUBQ      $32, CX
	JNZ       loop

	VPADDD       Y0, Y1, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X0, X1, X0
	VPSHUFD      $0x4e, X0, X1
	VPADDD       X0, X1, X0
	VPSHUFD      $0xb1, X0, X1
	VPADDD       X0, X1, X0
	VMOVD        X0, AX
	VZEROUPPER
	MOVL         AX, ret+24(FP)
	RET

// func prefetch(p *int8, n int)
// Asks for the n bytes at p (a multiple of 64) to be fetched into cache:
// a search fetches the vectors of all of a node's neighbours at once
// rather than waiting for each in turn.
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), SI
	MOVQ n+8(FP), CX

ploop:
	PREFETCHT0 (SI)
	ADDQ       $64, SI
	SUBQ       $64, CX
	JG         ploop
	RET
