//! Ring buffer space accounting, record layout and consumer order.

mod common;

use common::spec;
use hwxdp_maps::abi::map_type as mt;
use hwxdp_maps::Maps;

fn rb(size: u32) -> Maps {
    Maps::new(&[spec("events", mt::RINGBUF, 0, 0, size, 0)], 2).expect("ring buffer")
}

#[test]
fn records_take_header_plus_size_rounded_to_eight() {
    let mut m = rb(4096);
    // 1000-byte records take 1008 bytes: four fit (4032), a fifth would need 5040 > 4095.
    let slots: Vec<u32> = (0..4)
        .map(|_| m.ringbuf_reserve(0, 1000, 0).expect("fits"))
        .collect();
    assert_eq!(
        slots,
        [1, 127, 253, 379],
        "slot = byte offset of the data / 8"
    );
    assert_eq!(m.ringbuf_reserve(0, 1000, 0), None);
    // 56 bytes remain: a record of up to 48 bytes fits, leaving new_prod - cons = 4088 <= 4095.
    assert_eq!(m.ringbuf_reserve(0, 56, 0), None);
    let last = m.ringbuf_reserve(0, 48, 0).expect("48 + 8 fits");
    assert_eq!(m.value(0, last).len(), 48);
    assert_eq!(m.value(0, slots[0]).len(), 1000);
}

#[test]
fn reserve_rejects_flags_and_oversized_records() {
    let mut m = rb(4096);
    assert_eq!(m.ringbuf_reserve(0, 8, 1), None);
    assert_eq!(m.ringbuf_reserve(0, 4096, 0), None);
    assert_eq!(
        m.ringbuf_reserve(0, 4088, 0),
        None,
        "4096 bytes with the header exceed size - 1"
    );
    assert!(m.ringbuf_reserve(0, 4080, 0).is_some());
    assert_eq!(m.ringbuf_output(0, &[1], 4), -22);
    assert_eq!(m.ringbuf_output(0, &[1], 0), -11, "full: -EAGAIN");
}

#[test]
fn drain_returns_submitted_records_in_order_and_stops_at_a_busy_one() {
    let mut m = rb(4096);
    let a = m.ringbuf_reserve(0, 3, 0).expect("a");
    let b = m.ringbuf_reserve(0, 4, 0).expect("b");
    let c = m.ringbuf_reserve(0, 5, 0).expect("c");
    m.value_mut(0, a).copy_from_slice(b"aaa");
    m.value_mut(0, b).copy_from_slice(b"bbbb");
    m.value_mut(0, c).copy_from_slice(b"ccccc");
    m.ringbuf_commit(0, c, false);
    assert!(m.ringbuf_drain(0).is_empty(), "a is still reserved");
    m.ringbuf_commit(0, a, false);
    assert_eq!(m.ringbuf_drain(0), [b"aaa".to_vec()]);
    m.ringbuf_commit(0, b, true);
    assert_eq!(
        m.ringbuf_drain(0),
        [b"ccccc".to_vec()],
        "discarded b is skipped"
    );
    assert_eq!(m.ringbuf_output(0, b"dd", 2), 0);
    assert_eq!(m.ringbuf_drain(0), [b"dd".to_vec()]);
    assert!(m.ringbuf_drain(0).is_empty());
}

#[test]
fn discarded_and_undrained_records_hold_space_until_consumed() {
    let mut m = rb(4096);
    for _ in 0..4 {
        let s = m.ringbuf_reserve(0, 1000, 0).expect("fits");
        m.ringbuf_commit(0, s, true);
    }
    assert_eq!(
        m.ringbuf_reserve(0, 1000, 0),
        None,
        "discarded records still occupy the ring"
    );
    assert!(m.ringbuf_drain(0).is_empty());
    assert!(
        m.ringbuf_reserve(0, 1000, 0).is_some(),
        "draining freed the space"
    );
}

#[test]
fn an_uncommitted_old_record_limits_the_producer() {
    let mut m = rb(4096);
    let first = m.ringbuf_reserve(0, 1000, 0).expect("first");
    for _ in 0..3 {
        assert_eq!(m.ringbuf_output(0, &[7; 1000], 0), 0);
    }
    assert_eq!(
        m.ringbuf_drain(0).len(),
        0,
        "the consumer waits for the first record"
    );
    m.ringbuf_commit(0, first, false);
    assert_eq!(m.ringbuf_drain(0).len(), 4);
}

#[test]
fn records_that_wrap_around_the_end_read_back_whole() {
    let mut m = rb(4096);
    for _ in 0..4 {
        assert_eq!(m.ringbuf_output(0, &[1; 1000], 0), 0);
    }
    assert_eq!(m.ringbuf_drain(0).len(), 4);
    // The producer is at 4032: this record's data runs from 4040 past the end to 140.
    let data: Vec<u8> = (0..200u32).map(|i| i as u8).collect();
    let s = m.ringbuf_reserve(0, 200, 0).expect("fits after draining");
    assert_eq!(s, 4040 / 8);
    m.value_mut(0, s).copy_from_slice(&data);
    let t = m
        .ringbuf_reserve(0, 16, 0)
        .expect("after the wrapped record");
    m.value_mut(0, t).copy_from_slice(&[9; 16]);
    m.ringbuf_commit(0, t, false);
    m.ringbuf_commit(0, s, false);
    assert_eq!(m.ringbuf_drain(0), [data, vec![9; 16]]);
}
