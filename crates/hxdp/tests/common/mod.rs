//! What the compiler's tests share: a program from assembly, and the compiled program run against the reference
//! machine.

use hwxdp_hxdp::{compile_object, HxdpCore, Options};
use hwxdp_object::{ObjectSpec, ProgramSpec};
use hwxdp_xdp::{Config, Machine, XdpBuff, XdpMd};

/// A one-program object (`t`, section `xdp`) of the assembly `text`.
pub fn object(text: &str) -> ObjectSpec {
    let insns = hwxdp_ebpf::assemble(text).expect("assembles");
    ObjectSpec::single(ProgramSpec::standalone("t", "xdp", insns))
}

/// The program of `text`, compiled with default options, returns what the reference machine returns and leaves the
/// same packet bytes, on a frame of each of `lengths` bytes (byte i of a frame is `byte(i)`).
pub fn agrees_on_lengths(
    text: &str,
    lengths: impl IntoIterator<Item = usize>,
    byte: impl Fn(usize) -> u8,
) {
    let spec = object(text);
    let compiled = compile_object(&spec, 0, &Options::default()).expect("compiles");
    for len in lengths {
        let frame: Vec<u8> = (0..len).map(&byte).collect();
        let mut machine = Machine::new(&spec, None, &Config::default()).expect("loads");
        let mut a = XdpBuff::new(&frame).expect("frame");
        let want = machine.run_packet(&mut a, &XdpMd::default()).retval;
        let mut core =
            HxdpCore::new(compiled.image.clone(), &spec, None, &Config::default()).expect("loads");
        let mut b = XdpBuff::new(&frame).expect("frame");
        let got = core.run_packet(&mut b, &XdpMd::default()).retval();
        assert_eq!(want, got, "{len}-byte frame");
        assert_eq!(a.data(), b.data(), "{len}-byte frame: packet bytes");
    }
}
