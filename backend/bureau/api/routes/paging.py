"""The record's paging parameters, shared by the operator's `/record` and the stage's `/stage/record`."""

from __future__ import annotations

from typing import Annotated

from fastapi import Query

from bureau.scope.limits import MAX_EVENT_ID, RECORD_PAGE_DEFAULT, RECORD_PAGE_MAX

# `after` is the `next` of the page before (an entry id); a malformed or out-of-range one is a 422
# VALIDATION_ERROR that names the parameter, never its value.
RecordCursor = Annotated[int | None, Query(ge=1, le=MAX_EVENT_ID, description="the `next` of the previous page")]
RecordLimit = Annotated[int, Query(ge=1, le=RECORD_PAGE_MAX, description="entries per page")]

__all__ = ["RECORD_PAGE_DEFAULT", "RecordCursor", "RecordLimit"]
