//! Receive-side scaling: which receive queue a NIC would deliver a packet to, so that `rx_queue_index` varies per packet
//! as it does on real hardware. Toeplitz hash with the well-known default key over the IP addresses and, for TCP and
//! UDP, the ports; a 128-entry indirection table filled round-robin over the queues.

/// The default Toeplitz key most NIC drivers ship.
const KEY: [u8; 40] = [
    0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0,
    0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30, 0xf2, 0x0c,
    0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
];

/// The Toeplitz hash of `input` under the default key.
pub fn toeplitz(input: &[u8]) -> u32 {
    let mut hash = 0u32;
    let mut window = u32::from_be_bytes([KEY[0], KEY[1], KEY[2], KEY[3]]);
    for (i, byte) in input.iter().enumerate() {
        for bit in 0..8 {
            if byte & (0x80 >> bit) != 0 {
                hash ^= window;
            }
            let next = KEY.get(i + 4).copied().unwrap_or(0);
            window = (window << 1) | ((next >> (7 - bit)) & 1) as u32;
        }
    }
    hash
}

/// The hash input of a frame: addresses and ports, or nothing for non-IP traffic.
fn flow_bytes(frame: &[u8]) -> Vec<u8> {
    let mut off = 12;
    let mut ethertype = match frame.get(12..14) {
        Some(t) => u16::from_be_bytes([t[0], t[1]]),
        None => return Vec::new(),
    };
    while ethertype == 0x8100 || ethertype == 0x88a8 {
        off += 4;
        ethertype = match frame.get(off..off + 2) {
            Some(t) => u16::from_be_bytes([t[0], t[1]]),
            None => return Vec::new(),
        };
    }
    let l3 = off + 2;
    let (addrs, proto, l4) = match ethertype {
        0x0800 => {
            let Some(ihl) = frame.get(l3).map(|b| ((b & 0x0f) as usize) * 4) else {
                return Vec::new();
            };
            (
                frame.get(l3 + 12..l3 + 20),
                frame.get(l3 + 9).copied(),
                l3 + ihl,
            )
        }
        0x86dd => (
            frame.get(l3 + 8..l3 + 40),
            frame.get(l3 + 6).copied(),
            l3 + 40,
        ),
        _ => return Vec::new(),
    };
    let Some(addrs) = addrs else {
        return Vec::new();
    };
    let mut input = addrs.to_vec();
    if matches!(proto, Some(6) | Some(17)) {
        if let Some(ports) = frame.get(l4..l4 + 4) {
            input.extend_from_slice(ports);
        }
    }
    input
}

/// The receive queue among `queues` for `frame`.
pub fn queue(frame: &[u8], queues: u32) -> u32 {
    if queues <= 1 {
        return 0;
    }
    let input = flow_bytes(frame);
    if input.is_empty() {
        return 0;
    }
    (toeplitz(&input) & 0x7f) % queues
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toeplitz_matches_the_published_verification_vector() {
        // Microsoft's RSS verification suite: 66.9.149.187:2794 -> 161.142.100.80:1766 hashes to 0x51ccc178.
        let input = [66, 9, 149, 187, 161, 142, 100, 80, 0x0a, 0xea, 0x06, 0xe6];
        assert_eq!(toeplitz(&input), 0x51cc_c178);
        assert_eq!(toeplitz(&input[..8]), 0x323e_8fc2);
    }

    #[test]
    fn non_ip_and_single_queue_go_to_queue_zero() {
        let arp = [0u8; 12]
            .iter()
            .chain(&[0x08, 0x06])
            .copied()
            .collect::<Vec<_>>();
        assert_eq!(queue(&arp, 8), 0);
        assert_eq!(queue(&[0; 64], 1), 0);
    }
}
