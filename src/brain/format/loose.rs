//! JSON anywhere in the text, the chain's last resort before plain text.

use std::ops::Range;

use serde_json::Value;

use crate::brain::parse::{cut_out, has_shape, interpret, scan_json, Ctx, Found};

/// JSON anywhere in the text (the seeds' raw_decode scan): the first envelope or plan, or
/// every bare call.
pub(super) fn json_in_text(text: &str, _: &Ctx) -> Option<Result<Found, String>> {
    let scan = scan_json(text, false, has_shape);
    let (values, spans): (Vec<Value>, Vec<Range<usize>>) = scan.values.into_iter().unzip();
    let outside = cut_out(text, spans.into_iter());
    interpret(values, &outside).map(Ok)
}
