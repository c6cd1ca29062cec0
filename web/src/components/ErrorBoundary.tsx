import { Component, type ErrorInfo, type ReactNode } from "react";
import { useI18n } from "../i18n/I18n";

function CrashNotice() {
  const { t } = useI18n();
  return (
    <main id="main" className="crash-notice" role="alert" data-testid="crash-notice">
      <h1>{t("error.crashTitle")}</h1>
      <p>{t("error.crashBody")}</p>
      <button type="button" onClick={() => window.location.reload()}>
        {t("error.reload")}
      </button>
    </main>
  );
}

interface State {
  failed: boolean;
}

/** A render error anywhere below shows a readable notice instead of a blank screen. */
export class ErrorBoundary extends Component<{ children: ReactNode }, State> {
  state: State = { failed: false };

  static getDerivedStateFromError(): State {
    return { failed: true };
  }

  componentDidCatch(error: Error, info: ErrorInfo): void {
    console.error("screen crashed", error, info.componentStack);
  }

  render() {
    return this.state.failed ? <CrashNotice /> : this.props.children;
  }
}
