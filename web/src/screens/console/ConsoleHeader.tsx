import { useState } from "react";
import { Link } from "react-router";
import type { OperatorSnapshot } from "../../api/types";
import { useSession } from "../../access/SessionProvider";
import { ConfirmDialog } from "../../components/ConfirmDialog";
import { ConnectionDot } from "../../components/ConnectionDot";
import { LanguageSwitch } from "../../components/LanguageSwitch";
import type { ConnectionState } from "../../live/resumableStream";
import { useI18n } from "../../i18n/I18n";

interface ConsoleHeaderProps {
  snapshot: OperatorSnapshot;
  connection: ConnectionState;
  onReset: () => void;
  onErase: () => void;
  onSignOutError: (error: unknown) => void;
}

type PendingConfirmation = "reset" | "erase" | null;

export function ConsoleHeader({
  snapshot,
  connection,
  onReset,
  onErase,
  onSignOutError,
}: ConsoleHeaderProps) {
  const { t } = useI18n();
  const { session, signOut } = useSession();
  const [confirming, setConfirming] = useState<PendingConfirmation>(null);
  const caseId = snapshot.case.id;
  // Per case: a case in a language the model does not speak stays in evidence mode, and says why.
  const { mode, reason } = snapshot.mode;

  return (
    <header className="topbar console-header">
      <div className="console-header__identity">
        <Link to="/" className="topbar__title topbar__title--link">
          {t("app.title")}
        </Link>
        <dl className="facts">
          <div>
            <dt>{t("console.case")}</dt>
            <dd>
              <code data-testid="case-id">{caseId}</code>
            </dd>
          </div>
          <div>
            <dt>{t("console.scenario")}</dt>
            <dd>{snapshot.scenario.title}</dd>
          </div>
          <div>
            <dt>{t("console.caseLanguage")}</dt>
            <dd>{t(snapshot.case.language === "zh" ? "lang.zh" : "lang.en")}</dd>
          </div>
          <div>
            <dt>{t("console.mode")}</dt>
            <dd>
              <span className="badge" data-testid="mode" data-mode={mode}>
                {t(mode === "role_voice" ? "mode.role_voice" : "mode.evidence")}
              </span>{" "}
              <small data-testid="mode-reason">{t(`mode.reason.${reason}`)}</small>
            </dd>
          </div>
        </dl>
        <ConnectionDot state={connection} />
      </div>
      <nav className="console-header__actions" aria-label={t("console.case")}>
        <LanguageSwitch />
        <a className="button" href={`/stage/${encodeURIComponent(caseId)}`} target="_blank" rel="noreferrer">
          {t("console.openStage")}
        </a>
        <a className="button" href="/stage/latest" target="_blank" rel="noreferrer" data-testid="stage-follow">
          {t("console.stageFollow")}
        </a>
        <button type="button" className="button" onClick={() => setConfirming("reset")}>
          {t("console.reset")}
        </button>
        <button type="button" className="button button--danger" onClick={() => setConfirming("erase")}>
          {t("console.erase")}
        </button>
        {session?.passcodes_enabled && (
          <button type="button" className="button" onClick={() => signOut().catch(onSignOutError)}>
            {t("console.signOut")}
          </button>
        )}
      </nav>
      <ConfirmDialog
        open={confirming === "reset"}
        title={t("dialog.reset.title")}
        body={t("dialog.reset.body")}
        confirmLabel={t("dialog.reset.confirm")}
        onCancel={() => setConfirming(null)}
        onConfirm={() => {
          setConfirming(null);
          onReset();
        }}
      />
      <ConfirmDialog
        open={confirming === "erase"}
        danger
        title={t("dialog.erase.title")}
        body={t("dialog.erase.body")}
        confirmLabel={t("dialog.erase.confirm")}
        onCancel={() => setConfirming(null)}
        onConfirm={() => {
          setConfirming(null);
          onErase();
        }}
      />
    </header>
  );
}
