import { useState, type FormEvent } from "react";
import { ApiError, signIn } from "../api/client";
import { LIMITS } from "../api/rules";
import type { Audience } from "../api/types";
import { describeError } from "../components/describeError";
import { LanguageSwitch } from "../components/LanguageSwitch";
import { useCountdown } from "../components/useCountdown";
import { useI18n } from "../i18n/I18n";
import { useSession } from "./SessionProvider";

export function PasscodeScreen({ audience, hasWeakerSession }: { audience: Audience; hasWeakerSession: boolean }) {
  const { t } = useI18n();
  const { signedIn } = useSession();
  const [passcode, setPasscode] = useState("");
  const [checking, setChecking] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [retryIn, startRetryCountdown] = useCountdown();

  let intro = t(audience === "operator" ? "passcode.operatorIntro" : "passcode.stageIntro");
  if (hasWeakerSession && audience === "operator") intro = t("passcode.insufficient");

  async function submit(event: FormEvent) {
    event.preventDefault();
    setChecking(true);
    setError(null);
    try {
      await signIn(passcode);
      await signedIn();
    } catch (caught) {
      if (caught instanceof ApiError && caught.status === 429) {
        startRetryCountdown(caught.retryAfterSeconds ?? 30);
      } else if (caught instanceof ApiError && (caught.status === 401 || caught.status === 403)) {
        setError(t("passcode.wrong"));
      } else {
        setError(describeError(t, caught));
      }
    } finally {
      setChecking(false);
      setPasscode("");
    }
  }

  return (
    <main id="main" className="passcode-screen">
      <div className="passcode-card">
        <div className="passcode-card__top">
          <h1>{t("passcode.heading")}</h1>
          <LanguageSwitch />
        </div>
        <p>{intro}</p>
        <form onSubmit={submit}>
          <label htmlFor="passcode">{t("passcode.label")}</label>
          <input
            id="passcode"
            type="password"
            autoComplete="current-password"
            autoFocus
            required
            maxLength={LIMITS.passcode}
            value={passcode}
            onChange={(event) => setPasscode(event.target.value)}
            aria-describedby="passcode-status"
          />
          <button type="submit" className="button button--primary" disabled={checking || retryIn > 0 || passcode === ""}>
            {checking ? t("passcode.checking") : t("passcode.submit")}
          </button>
        </form>
        <p id="passcode-status" role="alert" className="form-error">
          {retryIn > 0 ? t("passcode.rateLimited", { n: retryIn }) : error}
        </p>
      </div>
    </main>
  );
}
