import { Fragment, type ReactNode } from "react";
import type { Audience } from "../api/types";
import { useI18n } from "../i18n/I18n";
import { needsPasscode } from "./audience";
import { PasscodeScreen } from "./PasscodeScreen";
import { useSession } from "./SessionProvider";

/** Shows the passcode screen instead of `children` until the session may open this screen. */
export function RequireAudience({ audience, children }: { audience: Audience; children: ReactNode }) {
  const { session, refusedByServer, epoch } = useSession();
  const { t } = useI18n();
  if (session === null) return <p className="page-status">{t("common.loading")}</p>;
  if (needsPasscode(session, audience, refusedByServer)) {
    const hasWeakerSession = session.audience !== null;
    return <PasscodeScreen audience={audience} hasWeakerSession={hasWeakerSession} />;
  }
  return <Fragment key={epoch}>{children}</Fragment>;
}
