import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { api, ApiError, onAccessDenied, setCsrfToken, signIn } from "./client";

type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

function mockFetch(...replies: Reply[]) {
  const fetchMock = vi.fn(async () => {
    const reply = replies.shift();
    if (!reply) throw new TypeError("Failed to fetch");
    return new Response(reply.body === undefined ? null : JSON.stringify(reply.body), { status: reply.status, headers: reply.headers });
  });
  vi.stubGlobal("fetch", fetchMock);
  return fetchMock;
}

const headersOf = (fetchMock: ReturnType<typeof mockFetch>, call: number) =>
  ((fetchMock.mock.calls[call] as unknown as [string, RequestInit])[1].headers ?? {}) as Record<string, string>;

describe("api client", () => {
  beforeEach(() => setCsrfToken(null));
  afterEach(() => vi.unstubAllGlobals());

  it("sends the CSRF token on writes only, with same-origin credentials", async () => {
    setCsrfToken("tok");
    const fetchMock = mockFetch({ status: 200, body: [] }, { status: 201, body: { card: { id: "c" } } });
    await api.scenarios();
    await api.whisper("case-1", "detective", "hello");
    expect(headersOf(fetchMock, 0)["X-CSRF-Token"]).toBeUndefined();
    expect(headersOf(fetchMock, 1)["X-CSRF-Token"]).toBe("tok");
    const [url, init] = fetchMock.mock.calls[1] as unknown as [string, RequestInit];
    expect(url).toBe("/api/cases/case-1/whispers");
    expect(init.credentials).toBe("same-origin");
    expect(JSON.parse(String(init.body))).toEqual({ role: "detective", text: "hello" });
  });

  it("turns the error envelope into an ApiError with code and Retry-After", async () => {
    mockFetch({ status: 409, body: { detail: { code: "PUBLICATION_PENDING", message: "busy" } }, headers: { "Retry-After": "2" } });
    const error = await api.publish("c", "informant", "i1").catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 409, code: "PUBLICATION_PENDING", message: "busy", retryAfterSeconds: 2 });
  });

  it("maps FastAPI validation lists to VALIDATION_ERROR and an unreachable server to NETWORK_ERROR", async () => {
    mockFetch({ status: 422, body: { detail: [{ loc: ["body", "role"], msg: "bad" }] } });
    await expect(api.interrogate("c", "detective", "q")).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    mockFetch();
    await expect(api.health()).rejects.toMatchObject({ status: 0, code: "NETWORK_ERROR" });
  });

  it("raises the passcode screen on ACCESS_REQUIRED / ROLE_FORBIDDEN", async () => {
    const listener = vi.fn();
    const unsubscribe = onAccessDenied(listener);
    mockFetch({ status: 401, body: { detail: { code: "ACCESS_REQUIRED", message: "no" } } });
    await expect(api.getCase("c")).rejects.toMatchObject({ code: "ACCESS_REQUIRED" });
    expect(listener).toHaveBeenCalledTimes(1);
    unsubscribe();
  });

  it("refreshes a stale CSRF token once and retries the write", async () => {
    setCsrfToken("old");
    const fetchMock = mockFetch(
      { status: 403, body: { detail: { code: "CSRF_REQUIRED", message: "csrf" } } },
      { status: 200, body: { audience: "operator", csrf_token: "new", passcodes_enabled: true } },
      { status: 200, body: { case: { id: "c" } } },
    );
    await api.resetCase("c");
    expect(headersOf(fetchMock, 2)["X-CSRF-Token"]).toBe("new");
  });

  it("signs in with the passcode header and keeps the returned CSRF token", async () => {
    const fetchMock = mockFetch({ status: 204, headers: { "X-CSRF-Token": "fresh" } }, { status: 204 });
    await expect(signIn("s3cret")).resolves.toBe("fresh");
    expect(headersOf(fetchMock, 0)["X-Bureau-Passcode"]).toBe("s3cret");
    await api.eraseCase("c");
    expect(headersOf(fetchMock, 1)["X-CSRF-Token"]).toBe("fresh");
  });

  it("does not raise the passcode screen for a wrong passcode", async () => {
    const listener = vi.fn();
    const unsubscribe = onAccessDenied(listener);
    mockFetch({ status: 401, body: { detail: { code: "ACCESS_REQUIRED", message: "wrong" } } });
    await expect(signIn("nope")).rejects.toMatchObject({ status: 401 });
    expect(listener).not.toHaveBeenCalled();
    unsubscribe();
  });
});
