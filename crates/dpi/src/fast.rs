//! The automaton the fast scan runs: only the states from which a pattern can still match (the live states), and two
//! absorbing states. Every transition into a state where a pattern ends goes to MATCHED, and every transition into a
//! state from which no pattern can match any more (for example once every anchored pattern has failed) goes to DEAD.
//! The fast scan therefore needs no test per byte: the state after the last byte is MATCHED when anything matched,
//! and the scan may stop as soon as it reaches MATCHED or DEAD. A MATCHED packet is scanned again on the full
//! automaton for the mask of the patterns that occur.

use crate::compile::Automaton;

/// The fast automaton of an [`Automaton`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fast {
    /// `next[s * 256 + b]`: the next fast state; rows `dead` and `matched` lead to themselves.
    pub next: Vec<u32>,
    /// The live states are `0..live`.
    pub live: usize,
    /// The state from which no pattern can match (`live`).
    pub dead: u32,
    /// The state after any pattern has matched (`live + 1`).
    pub matched: u32,
    /// Per automaton state, its fast state (`dead` for the states that cannot reach a match, `matched` for the
    /// states where a pattern ends).
    pub of_state: Vec<u32>,
}

impl Fast {
    /// The fast automaton of `a`.
    pub fn of(a: &Automaton) -> Fast {
        let n = a.states();
        let live = live_states(a);
        let count = (0..n).filter(|&s| live[s] && a.ends[s] == 0).count();
        let (dead, matched) = (count as u32, count as u32 + 1);
        let mut of_state = vec![dead; n];
        let mut k = 0;
        for s in 0..n {
            if a.ends[s] != 0 {
                of_state[s] = matched;
            } else if live[s] {
                of_state[s] = k;
                k += 1;
            }
        }
        let mut next = vec![0u32; (count + 2) * 256];
        for s in (0..n).filter(|&s| live[s] && a.ends[s] == 0) {
            let row = of_state[s] as usize * 256;
            for b in 0..256 {
                next[row + b] = of_state[a.next[s * 256 + b] as usize];
            }
        }
        for (state, row) in [(dead, count), (matched, count + 1)] {
            next[row * 256..(row + 1) * 256].fill(state);
        }
        Fast {
            next,
            live: count,
            dead,
            matched,
            of_state,
        }
    }

    /// The fast states, the two absorbing ones included.
    pub fn states(&self) -> usize {
        self.live + 2
    }

    /// Whether DEAD can be reached from a live state (the scan then has something to stop early for).
    pub fn has_dead(&self) -> bool {
        self.next[..self.live * 256].contains(&self.dead)
    }

    /// Runs the fast scan from automaton state `start` over `payload`: the final fast state.
    pub fn run(&self, start: u32, payload: &[u8]) -> u32 {
        let mut s = self.of_state[start as usize];
        for &b in payload {
            s = self.next[s as usize * 256 + b as usize];
        }
        s
    }
}

/// Per state, whether a state where a pattern ends can be reached from it (itself included).
fn live_states(a: &Automaton) -> Vec<bool> {
    let n = a.states();
    let mut preds: Vec<Vec<u32>> = vec![Vec::new(); n];
    for s in 0..n {
        for b in 0..256 {
            let t = a.next[s * 256 + b] as usize;
            if preds[t].last() != Some(&(s as u32)) {
                preds[t].push(s as u32);
            }
        }
    }
    let mut live: Vec<bool> = a.ends.iter().map(|&e| e != 0).collect();
    let mut work: Vec<usize> = (0..n).filter(|&s| live[s]).collect();
    while let Some(t) = work.pop() {
        for &s in &preds[t] {
            if !live[s as usize] {
                live[s as usize] = true;
                work.push(s as usize);
            }
        }
    }
    live
}
