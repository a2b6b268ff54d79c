//! Schedules as text: the stateful engine's replay tokens carry the schedule itself, one
//! character per scheduling choice.

/// How the error of a replayed schedule that is not an execution of its scenario begins (a
/// token edited by hand: its last word hashes the scenario, not the schedule); the command
/// line reports it as bad input.
pub const REPLAY_DIVERGED: &str = "the token's schedule is not an execution of this scenario";

/// A schedule as text: one character per choice (task 0–31: `0`–`9`, `a`–`v`), and for a
/// lasso the cycle after a `.`.
pub fn schedule_text(choices: &[u8], cycle: Option<usize>) -> String {
    const DIGITS: &[u8; 32] = b"0123456789abcdefghijklmnopqrstuv";
    let mut s = String::with_capacity(choices.len() + 1);
    for (i, &c) in choices.iter().enumerate() {
        if cycle == Some(i) {
            s.push('.');
        }
        s.push(DIGITS[c as usize] as char);
    }
    s
}

/// The inverse of [`schedule_text`].
pub fn parse_schedule(s: &str) -> Option<(Vec<u8>, Option<usize>)> {
    let mut choices = Vec::with_capacity(s.len());
    let mut cycle = None;
    for ch in s.chars() {
        match ch {
            '.' if cycle.is_none() => cycle = Some(choices.len()),
            '0'..='9' => choices.push(ch as u8 - b'0'),
            'a'..='v' => choices.push(ch as u8 - b'a' + 10),
            _ => return None,
        }
    }
    if cycle == Some(choices.len()) {
        return None;
    }
    Some((choices, cycle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedules_round_trip_and_garbage_is_refused() {
        let c = vec![0, 1, 31, 10, 2];
        assert_eq!(schedule_text(&c, None), "01va2");
        assert_eq!(parse_schedule("01va2"), Some((c.clone(), None)));
        assert_eq!(schedule_text(&c, Some(3)), "01v.a2");
        assert_eq!(parse_schedule("01v.a2"), Some((c, Some(3))));
        for bad in ["01w", "0..1", "01.", "A"] {
            assert_eq!(parse_schedule(bad), None, "{bad}");
        }
    }
}
