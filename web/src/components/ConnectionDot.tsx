import type { ConnectionState } from "../live/resumableStream";
import { useI18n } from "../i18n/I18n";

const STATE_KEYS = {
  live: "connection.live",
  connecting: "connection.connecting",
  reconnecting: "connection.reconnecting",
  ended: "connection.ended",
} as const;

export function ConnectionDot({ state }: { state: ConnectionState }) {
  const { t } = useI18n();
  const stateText = t(STATE_KEYS[state]);
  return (
    <span className={`connection connection--${state}`} role="status" aria-label={t("connection.label", { state: stateText })} data-state={state}>
      <span className="connection__dot" aria-hidden="true" />
      <span className="connection__text">{stateText}</span>
    </span>
  );
}
