/* The case record as `GET /api/cases/{id}/record` sends it (operator only): the generated contract's types
 * (`types.ts`, from the OpenAPI document), under the names the timeline uses. */
export type { CaseRecordView, CrossExaminationEntry, InterrogationEntry, RecordEntry } from "./types";
