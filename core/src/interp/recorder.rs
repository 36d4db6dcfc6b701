//! [`TapeRecorder`]: the θ tape that generated PGF code writes with `record` and orders with
//! `segment` ([`SegmentOp`]).
//!
//! A PGF records values in the order its code runs, which is not always the order the inverse
//! reads them: a loop's iterations are read last first (a frame's segments are reversed when it
//! closes), and a recursion's own θ is read before its callees' (`hold`/`stash` take a callee's
//! values aside, `place` puts them back later). Moving values to do that costs, per level of a
//! recursion, the size of everything below it: n·fib(n) for fib. So the recorder never moves a
//! value. Values stay where they were recorded (`values`), and the tape is a linked list of
//! *pieces*, runs of consecutive values; reordering relinks pieces, in time proportional to the
//! number of segments, stashes and places, whatever their sizes. The list is read out once, at
//! the end ([`TapeRecorder::into_values`]).
//!
//! Invariants:
//! - `pieces[0]` is the head, an empty piece no op moves; the tape is the list from it to `tail`,
//!   and every piece in it is non-empty but the head.
//! - A *mark* (a frame's start, a cut, a hold) is a piece id, standing for the place just after
//!   that piece. Taking a mark seals the tail (`open` is cleared), so no later value extends a
//!   marked piece: the mark stays at the place it was taken, whatever is linked after it.
//! - A frame's start and cuts are in the list, in list order, and its captures come at or after
//!   its last cut. A stash holds a list no longer linked into the tape.

use crate::interp::{ThetaAddress, ThetaError, ThetaSource};
use crate::ir::{Const, Domain, SegmentOp};

/// The end of a list of pieces.
const NONE: usize = usize::MAX;

/// Collects the θ tape that generated PGF code writes with `record` and orders with `segment`;
/// refuses reads. Each op costs constant time (a frame's close, time in its segments' number),
/// however many values it moves.
#[derive(Clone, Debug)]
pub struct TapeRecorder {
    /// Every value recorded, in the order it was recorded.
    values: Vec<Const>,
    pieces: Vec<Piece>,
    /// The last piece of the tape.
    tail: usize,
    /// Whether the next value may extend `tail` (it is the last piece made, and not marked).
    open: bool,
    /// The open frames are `frames[..depth]`; those after keep their allocations for the next
    /// frames (a recursion opens and closes a frame per call).
    frames: Vec<SegmentFrame>,
    depth: usize,
    /// A closing frame's segments (kept for its allocation).
    segments: Vec<Detached>,
}

/// The values `start..end` of `values`, then the piece `next`.
#[derive(Clone, Copy, Debug)]
struct Piece {
    start: usize,
    end: usize,
    next: usize,
}

/// A list of pieces taken out of the tape by a `stash`.
#[derive(Clone, Copy, Debug)]
struct Detached {
    head: usize,
    last: usize,
}

/// An open `segment` frame: the mark where it starts, and the marks where each of its segments
/// after the first starts.
#[derive(Clone, Debug, Default)]
struct SegmentFrame {
    start: usize,
    cuts: Vec<usize>,
    /// The mark of each open `hold` (at or after the last cut).
    captures: Vec<usize>,
    /// The current segment's stashes, by number (a number never stashed, or stashed empty, holds
    /// nothing).
    stashes: Vec<Option<Detached>>,
}

impl Default for TapeRecorder {
    fn default() -> TapeRecorder {
        TapeRecorder {
            values: Vec::new(),
            pieces: vec![Piece {
                start: 0,
                end: 0,
                next: NONE,
            }],
            tail: 0,
            open: false,
            frames: Vec::new(),
            depth: 0,
            segments: Vec::new(),
        }
    }
}

impl PartialEq for TapeRecorder {
    /// Two recorders are equal when their tapes are (however each was built).
    fn eq(&self, other: &TapeRecorder) -> bool {
        self.values() == other.values()
    }
}

impl TapeRecorder {
    pub fn new() -> TapeRecorder {
        TapeRecorder::default()
    }

    /// How many values were recorded (those a `cut` or `close` forgot included).
    pub fn recorded(&self) -> usize {
        self.values.len()
    }

    /// The tape recorded so far, in order.
    pub fn values(&self) -> Vec<Const> {
        let mut out = Vec::with_capacity(self.values.len());
        let mut p = self.pieces[0].next;
        while p != NONE {
            let piece = self.pieces[p];
            out.extend_from_slice(&self.values[piece.start..piece.end]);
            p = piece.next;
        }
        out
    }

    /// The recorded tape.
    pub fn into_values(self) -> Vec<Const> {
        self.values()
    }

    /// Appends a value to the tape.
    pub fn push(&mut self, value: Const) {
        let at = self.values.len();
        self.values.push(value);
        if self.open {
            self.pieces[self.tail].end = at + 1;
        } else {
            let id = self.pieces.len();
            self.pieces.push(Piece {
                start: at,
                end: at + 1,
                next: NONE,
            });
            self.pieces[self.tail].next = id;
            self.tail = id;
            self.open = true;
        }
    }

    /// A mark at the end of the tape.
    fn mark(&mut self) -> usize {
        self.open = false;
        self.tail
    }

    /// Links `list` after the tail.
    fn append(&mut self, list: Detached) {
        self.pieces[self.tail].next = list.head;
        self.tail = list.last;
        self.open = false;
    }

    /// Unlinks the pieces after `mark`, which must be in the tape.
    fn detach_after(&mut self, mark: usize) -> Option<Detached> {
        let head = self.pieces[mark].next;
        if head == NONE {
            return None;
        }
        let last = self.tail;
        self.pieces[mark].next = NONE;
        self.tail = mark;
        self.open = false;
        Some(Detached { head, last })
    }

    /// The innermost open frame.
    fn top(&mut self) -> Result<&mut SegmentFrame, ThetaError> {
        self.frames[..self.depth].last_mut().ok_or_else(unopened)
    }

    /// Applies a `segment` op.
    pub fn segment_op(&mut self, op: SegmentOp) -> Result<(), ThetaError> {
        match op {
            SegmentOp::Open => {
                let start = self.mark();
                match self.frames.get_mut(self.depth) {
                    Some(frame) => {
                        frame.start = start;
                        frame.cuts.clear();
                        frame.captures.clear();
                        frame.stashes.clear();
                    }
                    None => self.frames.push(SegmentFrame {
                        start,
                        ..SegmentFrame::default()
                    }),
                }
                self.depth += 1;
            }
            SegmentOp::Cut => {
                let end = self.mark();
                let frame = self.top()?;
                // A segment with no values gets no cut: a loop whose iterations record nothing
                // costs no memory per iteration.
                if end != frame.cuts.last().copied().unwrap_or(frame.start) {
                    frame.cuts.push(end);
                }
                frame.captures.clear();
                frame.stashes.clear();
            }
            SegmentOp::Hold => {
                let at = self.mark();
                let frame = self.top()?;
                frame.captures.push(at);
            }
            SegmentOp::Stash(k) => {
                let frame = self.top()?;
                let at = frame.captures.pop().ok_or_else(|| {
                    ThetaError::Other(
                        "`segment stash` with no `hold`: the PGF is malformed".to_string(),
                    )
                })?;
                let list = self.detach_after(at);
                let frame = self.top()?;
                let k = k as usize;
                if frame.stashes.len() <= k {
                    frame.stashes.resize(k + 1, None);
                }
                frame.stashes[k] = list;
            }
            SegmentOp::Place(k) => {
                let frame = self.top()?;
                if let Some(list) = frame.stashes.get_mut(k as usize).and_then(Option::take) {
                    self.append(list);
                }
            }
            SegmentOp::Close => {
                self.depth = self.depth.checked_sub(1).ok_or_else(unopened)?;
                let start = self.frames[self.depth].start;
                let cuts = std::mem::take(&mut self.frames[self.depth].cuts);
                self.close(start, &cuts);
                self.frames[self.depth].cuts = cuts;
            }
        }
        Ok(())
    }

    /// Puts the segments of a closing frame (from the mark `start`, cut at `cuts`) last first,
    /// each in its own order.
    fn close(&mut self, start: usize, cuts: &[usize]) {
        self.open = false;
        if cuts.is_empty() {
            return;
        }
        let end = self.tail;
        // Each segment's (head, last), first to last (the last may be empty).
        let mut segments = std::mem::take(&mut self.segments);
        segments.clear();
        let mut from = start;
        for &cut in cuts.iter().chain([&end]) {
            if cut != from {
                segments.push(Detached {
                    head: self.pieces[from].next,
                    last: cut,
                });
            }
            from = cut;
        }
        if segments.len() >= 2 {
            self.pieces[start].next = NONE;
            self.tail = start;
            for &segment in segments.iter().rev() {
                self.pieces[segment.last].next = NONE;
                self.append(segment);
            }
        }
        self.segments = segments;
    }
}

impl ThetaSource for TapeRecorder {
    fn theta(&mut self, _: Domain, _: &ThetaAddress<'_>) -> Result<Const, ThetaError> {
        Err(ThetaError::Other(
            "a PGF records θ; it does not read it".to_string(),
        ))
    }

    fn choice(&mut self, _: u32, _: &ThetaAddress<'_>) -> Result<u32, ThetaError> {
        Err(ThetaError::Other(
            "a PGF records θ; it does not read it".to_string(),
        ))
    }

    fn record(&mut self, value: Const, _: &ThetaAddress<'_>) -> Result<(), ThetaError> {
        self.push(value);
        Ok(())
    }

    fn segment(&mut self, op: SegmentOp) -> Result<(), ThetaError> {
        self.segment_op(op)
    }

    fn as_recorder(&mut self) -> Option<&mut TapeRecorder> {
        Some(self)
    }
}

fn unopened() -> ThetaError {
    ThetaError::Other("`segment` with no open frame: the PGF is malformed".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tape(ops: &[Result<i64, SegmentOp>]) -> Vec<i64> {
        let mut r = TapeRecorder::new();
        for op in ops {
            match *op {
                Ok(v) => r.push(Const::I64(v)),
                Err(op) => r.segment_op(op).expect("well-formed ops"),
            }
        }
        r.into_values()
            .into_iter()
            .map(|c| match c {
                Const::I64(v) => v,
                other => panic!("recorded {other}"),
            })
            .collect()
    }

    use SegmentOp::*;

    #[test]
    fn a_frame_closes_with_its_segments_last_first() {
        let ops = [
            Ok(0),
            Err(Open),
            Ok(1),
            Ok(2),
            Err(Cut),
            Err(Cut),
            Ok(3),
            Err(Cut),
            Ok(4),
            Ok(5),
            Err(Close),
            Ok(6),
        ];
        assert_eq!(tape(&ops), [0, 4, 5, 3, 1, 2, 6]);
    }

    #[test]
    fn a_stash_is_placed_where_place_says_and_nested_frames_reverse_inside_it() {
        let ops = [
            Err(Open),
            Err(Hold),
            Ok(1),
            Err(Open),
            Ok(2),
            Err(Cut),
            Ok(3),
            Err(Close),
            Err(Stash(0)),
            Err(Hold),
            Ok(4),
            Err(Stash(1)),
            Ok(5),
            Err(Place(1)),
            Err(Place(0)),
            Err(Place(7)),
            Ok(6),
            Err(Close),
        ];
        assert_eq!(tape(&ops), [5, 4, 1, 3, 2, 6]);
    }

    #[test]
    fn a_cut_forgets_what_was_not_placed_and_an_empty_segment_costs_nothing() {
        let ops = [
            Err(Open),
            Err(Hold),
            Ok(1),
            Err(Stash(0)),
            Err(Cut),
            Err(Place(0)),
            Ok(2),
            Err(Cut),
            Err(Cut),
            Ok(3),
            Err(Close),
        ];
        assert_eq!(tape(&ops), [3, 2]);
    }

    /// The recorder this one replaced, which moves values (a stash splits them off, a close
    /// reverses them in place): the meaning of the ops, written the obvious way.
    #[derive(Default)]
    struct Model {
        values: Vec<i64>,
        frames: Vec<ModelFrame>,
    }

    /// A frame's start, cuts, captures and stashes.
    type ModelFrame = (usize, Vec<usize>, Vec<usize>, Vec<Vec<i64>>);

    impl Model {
        fn apply(&mut self, op: SegmentOp) {
            let end = self.values.len();
            match op {
                Open => self.frames.push((end, vec![], vec![], vec![])),
                Cut => {
                    let (start, cuts, captures, stashes) = self.frames.last_mut().unwrap();
                    if end > cuts.last().copied().unwrap_or(*start) {
                        cuts.push(end);
                    }
                    captures.clear();
                    stashes.clear();
                }
                Hold => self.frames.last_mut().unwrap().2.push(end),
                Stash(k) => {
                    let frame = self.frames.last_mut().unwrap();
                    let start = frame.2.pop().unwrap();
                    let k = k as usize;
                    if frame.3.len() <= k {
                        frame.3.resize_with(k + 1, Vec::new);
                    }
                    frame.3[k] = self.values.split_off(start);
                }
                Place(k) => {
                    let frame = self.frames.last_mut().unwrap();
                    if let Some(stash) = frame.3.get_mut(k as usize) {
                        self.values.append(stash);
                    }
                }
                Close => {
                    let (start, cuts, _, _) = self.frames.pop().unwrap();
                    let mut segments: Vec<Vec<i64>> = vec![];
                    let mut from = start;
                    for to in cuts.into_iter().filter(|&c| c < end).chain([end]) {
                        segments.push(self.values[from..to].to_vec());
                        from = to;
                    }
                    self.values.truncate(start);
                    for segment in segments.into_iter().rev() {
                        self.values.extend(segment);
                    }
                }
            }
        }
    }

    /// A well-formed op sequence (every stash after a hold of its frame's segment, every close
    /// after an open), as a PGF's code makes them, from random choices.
    fn well_formed(choices: &[u8]) -> Vec<Result<i64, SegmentOp>> {
        let mut ops = vec![];
        // Per open frame: its open holds.
        let mut frames: Vec<usize> = vec![];
        for (i, &c) in choices.iter().enumerate() {
            let op = match c % 8 {
                0 | 1 => Ok(i as i64),
                2 => Err(Open),
                3 if !frames.is_empty() => Err(Cut),
                4 if !frames.is_empty() => Err(Hold),
                5 if frames.last().is_some_and(|&h| h > 0) => Err(Stash(u32::from(c / 8 % 3))),
                6 if !frames.is_empty() => Err(Place(u32::from(c / 8 % 3))),
                7 if frames.last() == Some(&0) => Err(Close),
                _ => Ok(-(i as i64)),
            };
            match op {
                Err(Open) => frames.push(0),
                Err(Cut) => *frames.last_mut().unwrap() = 0,
                Err(Hold) => *frames.last_mut().unwrap() += 1,
                Err(Stash(_)) => *frames.last_mut().unwrap() -= 1,
                Err(Close) => {
                    frames.pop();
                }
                _ => {}
            }
            ops.push(op);
        }
        ops
    }

    proptest::proptest! {
        #[test]
        fn the_rope_records_what_moving_the_values_records(
            choices in proptest::collection::vec(0u8..=255, 0..300)
        ) {
            let ops = well_formed(&choices);
            let mut model = Model::default();
            for op in &ops {
                match *op {
                    Ok(v) => model.values.push(v),
                    Err(op) => model.apply(op),
                }
            }
            proptest::prop_assert_eq!(tape(&ops), model.values);
        }
    }
}
