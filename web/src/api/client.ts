import type {
  CaseLanguage,
  CaseRecordPage,
  CrossExaminationResult,
  FindingEvaluation,
  FindingList,
  FindingPromotion,
  Health,
  InterrogationResult,
  MemoryPolicy,
  OperatorSnapshot,
  PolicyDecisionPage,
  PublicationResult,
  Role,
  ScenarioSummary,
  SessionInfo,
  StageSnapshot,
  Card,
} from "./types";

/** A failed API call with the server's machine-readable code (or NETWORK_ERROR when nothing answered). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryAfterSeconds: number | null;

  constructor(status: number, code: string, message: string, retryAfterSeconds: number | null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.code = code;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  get isAccessProblem(): boolean {
    return this.code === "ACCESS_REQUIRED" || this.code === "ROLE_FORBIDDEN";
  }
}

export const NETWORK_ERROR = "NETWORK_ERROR";

let csrfToken: string | null = null;
const accessListeners = new Set<(error: ApiError) => void>();

export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

/** Called whenever any call is refused for lack of a (sufficient) session, so the passcode screen can appear. */
export function onAccessDenied(listener: (error: ApiError) => void): () => void {
  accessListeners.add(listener);
  return () => accessListeners.delete(listener);
}

function parseRetryAfter(response: Response): number | null {
  const header = response.headers.get("Retry-After");
  if (header === null) return null;
  const seconds = Number(header);
  if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
  const date = Date.parse(header);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}

async function errorFrom(response: Response): Promise<ApiError> {
  let code = `HTTP_${response.status}`;
  let message = response.statusText;
  try {
    const body: unknown = await response.json();
    const detail = (body as { detail?: unknown }).detail;
    if (detail && typeof detail === "object" && !Array.isArray(detail)) {
      const { code: detailCode, message: detailMessage } = detail as { code?: unknown; message?: unknown };
      if (typeof detailCode === "string") code = detailCode;
      if (typeof detailMessage === "string") message = detailMessage;
    } else if (Array.isArray(detail) || response.status === 422) {
      code = "VALIDATION_ERROR";
    }
  } catch {
    // Not JSON: keep the HTTP status as the code.
  }
  return new ApiError(response.status, code, message, parseRetryAfter(response));
}

interface RequestOptions {
  body?: unknown;
  headers?: Record<string, string>;
  /** Session calls handle their own 401s; everything else raises the passcode screen. */
  reportAccessProblems?: boolean;
}

const WRITE_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);

async function send(method: string, path: string, options: RequestOptions): Promise<Response> {
  const headers: Record<string, string> = { Accept: "application/json", ...options.headers };
  if (options.body !== undefined) headers["Content-Type"] = "application/json";
  if (WRITE_METHODS.has(method) && csrfToken) headers["X-CSRF-Token"] = csrfToken;
  try {
    return await fetch(path, {
      method,
      headers,
      credentials: "same-origin",
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
  } catch {
    throw new ApiError(0, NETWORK_ERROR, "The server did not answer.", null);
  }
}

async function call(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
  let response = await send(method, path, options);
  if (response.status === 403 && WRITE_METHODS.has(method)) {
    const error = await errorFrom(response.clone());
    if (error.code === "CSRF_REQUIRED") {
      // The token may have rotated (e.g. a new session in another tab): fetch it once and retry.
      const session = await getSession();
      setCsrfToken(session.csrf_token);
      response = await send(method, path, options);
    }
  }
  if (!response.ok) {
    const error = await errorFrom(response);
    if (error.isAccessProblem && options.reportAccessProblems !== false) {
      accessListeners.forEach((listener) => listener(error));
    }
    throw error;
  }
  return response;
}

async function callJson<T>(method: string, path: string, options?: RequestOptions): Promise<T> {
  const response = await call(method, path, options);
  return (await response.json()) as T;
}

const casePath = (caseId: string) => `/api/cases/${encodeURIComponent(caseId)}`;

export function getSession(): Promise<SessionInfo> {
  return callJson<SessionInfo>("GET", "/api/session", { reportAccessProblems: false });
}

/** Exchanges a passcode for a session cookie; returns the CSRF token for later writes. */
export async function signIn(passcode: string): Promise<string | null> {
  const response = await call("POST", "/api/session", {
    headers: { "X-Bureau-Passcode": passcode },
    reportAccessProblems: false,
  });
  const token = response.headers.get("X-CSRF-Token");
  setCsrfToken(token);
  return token;
}

export async function signOut(): Promise<void> {
  await call("DELETE", "/api/session", { reportAccessProblems: false });
  setCsrfToken(null);
}

export const api = {
  health: () => callJson<Health>("GET", "/api/health"),
  scenarios: () => callJson<ScenarioSummary[]>("GET", "/api/scenarios"),
  createCase: (scenarioId: string, language: CaseLanguage) =>
    callJson<OperatorSnapshot>("POST", "/api/cases", { body: { scenario_id: scenarioId, language } }),
  getCase: (caseId: string) => callJson<OperatorSnapshot>("GET", casePath(caseId)),
  resetCase: (caseId: string) => callJson<OperatorSnapshot>("POST", `${casePath(caseId)}/reset`),
  eraseCase: async (caseId: string) => {
    await call("DELETE", casePath(caseId));
  },
  whisper: (caseId: string, role: Role, text: string, memoryType?: string, key?: string, source?: string) =>
    callJson<{ card: Card }>("POST", `${casePath(caseId)}/whispers`, {
      body: {
        role,
        text,
        ...(memoryType ? { memory_type: memoryType } : {}),
        ...(key ? { key } : {}),
        ...(source ? { source } : {}),
      },
    }),
  /** Erase one private card: its board copies go, findings it supported are re-checked (docs/findings.md). */
  deleteCard: async (caseId: string, cardId: string) => {
    await call("DELETE", `${casePath(caseId)}/cards/${encodeURIComponent(cardId)}`);
  },
  /** Each given (or, without one, proposed) claim with every matching card's status; changes nothing. */
  evaluateFindings: (caseId: string, claim?: string) =>
    callJson<FindingEvaluation>("POST", `${casePath(caseId)}/findings/evaluate`, { body: claim ? { claim } : {} }),
  promoteFinding: (caseId: string, claim: string) =>
    callJson<FindingPromotion>("POST", `${casePath(caseId)}/findings`, { body: { claim } }),
  findings: (caseId: string) => callJson<FindingList>("GET", `${casePath(caseId)}/findings`),
  memoryPolicy: () => callJson<MemoryPolicy>("GET", "/api/memory-policy"),
  policyDecisions: (caseId: string, after = 0) =>
    callJson<PolicyDecisionPage>("GET", `${casePath(caseId)}/policy-decisions?after=${after}&limit=100`),
  interrogate: (caseId: string, role: Role, question: string) =>
    callJson<InterrogationResult>("POST", `${casePath(caseId)}/interrogations`, { body: { role, question } }),
  /** The presenter act (docs/presenter-guide.md): the question asked without the space filter; the answer is the
   * ordinary route's, the trace adds what other compartments handed back, locked. 403 PRESENTER_ACTS_OFF unless
   * the server has it on (`Health.presenter_acts`). */
  unfilteredAct: (caseId: string, role: Role, question: string) =>
    callJson<InterrogationResult>("POST", `${casePath(caseId)}/acts/unfiltered`, { body: { role, question } }),
  crossExamine: (caseId: string, roles: Role[], question: string) =>
    callJson<CrossExaminationResult>("POST", `${casePath(caseId)}/cross-examinations`, { body: { roles, question } }),
  publish: (caseId: string, role: Role, cardId: string) =>
    callJson<PublicationResult>("POST", `${casePath(caseId)}/publications`, { body: { role, card_id: cardId } }),
  /** A page of the case record, newest first: the `limit` entries older than `after` (null: the newest), with the
   * cursor of the next page. Operator only; the stage never asks for it. */
  recordPage: (caseId: string, after: number | null, limit: number) =>
    callJson<CaseRecordPage>("GET", `${casePath(caseId)}/record?limit=${limit}${after === null ? "" : `&after=${after}`}`),
  /** Where the browser downloads the record (operator only): JSON, or a Markdown report to hand out. */
  recordExportUrl: (caseId: string, format: "json" | "markdown") => `${casePath(caseId)}/record/export?format=${format}`,
  stage: (caseId: string) => callJson<StageSnapshot>("GET", `${casePath(caseId)}/stage`),
  /** The newest active case on this server (404 CASE_NOT_FOUND while there is none). */
  latestCase: () => callJson<{ case_id: string }>("GET", "/api/stage/latest"),
};

export const streamUrls = {
  operator: (caseId: string) => `${casePath(caseId)}/events`,
  stage: (caseId: string) => `${casePath(caseId)}/stage/events`,
};
