//! What `report` still reads of the verdicts from here; they live in
//! [`crate::app::verdicts`].

pub(super) use crate::app::verdicts::{Judge, Judged};
