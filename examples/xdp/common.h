/* Small helpers shared by the examples: header structs come from uapi, only checksum arithmetic lives here. */
#ifndef HWXDP_EXAMPLES_COMMON_H
#define HWXDP_EXAMPLES_COMMON_H

#include <linux/types.h>

/* Folds a 32-bit one's-complement sum to 16 bits and complements it, as stored in a header. */
static __always_inline __u16 csum_fold32(__u32 sum)
{
	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (__u16)~sum;
}

/* RFC 1624 incremental update of a stored checksum when one 16-bit word changes from old to new. */
static __always_inline __u16 csum_replace16(__u16 check, __u16 old, __u16 new)
{
	__u32 sum = (__u16)~check;
	sum += (__u16)~old;
	sum += new;
	return csum_fold32(sum);
}

/* Checksum of a 20-byte IPv4 header without options, read as ten 16-bit words. */
static __always_inline __u16 ipv4_header_csum(const __u16 *words)
{
	__u32 sum = 0;
#pragma clang loop unroll(full)
	for (int i = 0; i < 10; i++)
		sum += words[i];
	return csum_fold32(sum);
}

#endif
