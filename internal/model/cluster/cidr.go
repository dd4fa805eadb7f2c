package cluster

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// Subnet returns the index-th subnet of p with extra bits more prefix bits:
// Subnet(10.0.0.0/16, 3, 2) is 10.0.64.0/19.
func Subnet(p netip.Prefix, extra, index int) (netip.Prefix, error) {
	bits := p.Bits() + extra
	if extra < 0 || bits > 32 {
		return netip.Prefix{}, fmt.Errorf("cannot split %s into /%d subnets", p, bits)
	}
	if index < 0 || index >= 1<<extra {
		return netip.Prefix{}, fmt.Errorf("%s has no subnet %d of size /%d", p, index, bits)
	}
	a := p.Masked().Addr().As4()
	n := uint32(a[0])<<24 | uint32(a[1])<<16 | uint32(a[2])<<8 | uint32(a[3])
	n += uint32(index) << (32 - bits) //nolint:gosec // 0 <= index < 2^extra, checked above
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], n)
	return netip.PrefixFrom(netip.AddrFrom4(b), bits), nil
}

// HostAddress returns the index-th address of p, e.g. the DNS service IP of
// a service range.
func HostAddress(p netip.Prefix, index int) netip.Addr {
	a := p.Masked().Addr()
	for range index {
		a = a.Next()
	}
	return a
}
