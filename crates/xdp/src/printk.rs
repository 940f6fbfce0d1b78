//! The format strings of `bpf_trace_printk`: the conversions the kernel accepts (`%d %i %u %x %X %c %s %p` with `l`/`ll`
//! length modifiers, flags `-0+ #` and a width), at most three arguments.

/// Formats `fmt` (the bytes the program passed, which must contain a NUL) with `args`. `%s` arguments are read through
/// `read_str(address, max_len)`. Returns `None` where the kernel returns `-EINVAL`.
pub fn format(
    fmt: &[u8],
    args: &[u64],
    mut read_str: impl FnMut(u64, usize) -> Option<String>,
) -> Option<String> {
    let end = fmt.iter().position(|&b| b == 0)?;
    let fmt = &fmt[..end];
    let mut out = String::new();
    let mut next_arg = args.iter();
    let mut i = 0;
    while i < fmt.len() {
        let c = fmt[i];
        i += 1;
        if c != b'%' {
            out.push(c as char);
            continue;
        }
        if fmt.get(i) == Some(&b'%') {
            out.push('%');
            i += 1;
            continue;
        }
        let (mut left, mut zero, mut plus, mut alt) = (false, false, false, false);
        while let Some(&f) = fmt.get(i) {
            match f {
                b'-' => left = true,
                b'0' => zero = true,
                b'+' => plus = true,
                b'#' => alt = true,
                b' ' => {}
                _ => break,
            }
            i += 1;
        }
        let mut width = 0usize;
        while let Some(d) = fmt.get(i).filter(|b| b.is_ascii_digit()) {
            width = width * 10 + (d - b'0') as usize;
            i += 1;
        }
        let mut longs = 0;
        while fmt.get(i) == Some(&b'l') {
            longs += 1;
            i += 1;
        }
        if longs > 2 {
            return None;
        }
        let conv = *fmt.get(i)?;
        i += 1;
        let arg = *next_arg.next()?;
        let narrow = |v: u64| if longs == 0 { v as u32 as u64 } else { v };
        let body = match conv {
            b'd' | b'i' => {
                let v = if longs == 0 {
                    arg as i32 as i64
                } else {
                    arg as i64
                };
                if plus && v >= 0 {
                    format!("+{v}")
                } else {
                    v.to_string()
                }
            }
            b'u' => narrow(arg).to_string(),
            b'x' if alt => format!("{:#x}", narrow(arg)),
            b'x' => format!("{:x}", narrow(arg)),
            b'X' if alt => format!("0X{:X}", narrow(arg)),
            b'X' => format!("{:X}", narrow(arg)),
            b'c' => ((arg as u8) as char).to_string(),
            b'p' => format!("{:#018x}", arg),
            b's' => read_str(arg, 1024)?,
            _ => return None,
        };
        pad(
            &mut out,
            &body,
            width,
            left,
            zero && !left && conv != b's' && conv != b'c',
        );
    }
    Some(out)
}

fn pad(out: &mut String, body: &str, width: usize, left: bool, zero: bool) {
    let fill = width.saturating_sub(body.chars().count());
    if left {
        out.push_str(body);
        out.extend(std::iter::repeat_n(' ', fill));
    } else if zero {
        let (sign, digits) = match body.strip_prefix('-') {
            Some(d) => ("-", d),
            None => ("", body),
        };
        out.push_str(sign);
        out.extend(std::iter::repeat_n('0', fill));
        out.push_str(digits);
    } else {
        out.extend(std::iter::repeat_n(' ', fill));
        out.push_str(body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(fmt: &str, args: &[u64]) -> Option<String> {
        let mut bytes = fmt.as_bytes().to_vec();
        bytes.push(0);
        format(&bytes, args, |addr, _| Some(format!("<{addr}>")))
    }

    #[test]
    fn conversions_the_kernel_accepts() {
        assert_eq!(
            f("n=%d u=%u", &[-5i64 as u64, 7]).as_deref(),
            Some("n=-5 u=7")
        );
        assert_eq!(
            f("%x %lx", &[0x1_0000_00ff, 0x1_0000_00ff]).as_deref(),
            Some("ff 1000000ff")
        );
        assert_eq!(
            f("[%5d][%-4u][%04x]", &[42, 7, 0xab]).as_deref(),
            Some("[   42][7   ][00ab]")
        );
        assert_eq!(f("%s!", &[9]).as_deref(), Some("<9>!"));
        assert_eq!(f("100%%", &[]).as_deref(), Some("100%"));
    }

    #[test]
    fn refuses_what_the_kernel_refuses() {
        assert_eq!(format(b"no terminator", &[], |_, _| None), None);
        assert_eq!(f("%d %d", &[1]), None, "more conversions than arguments");
        assert_eq!(f("%q", &[1]), None);
        assert_eq!(f("%llld", &[1]), None);
    }
}
