import { BrowserRouter, Navigate, Route, Routes } from "react-router";
import { RequireAudience } from "./access/RequireAudience";
import { SessionProvider } from "./access/SessionProvider";
import { ErrorBoundary } from "./components/ErrorBoundary";
import { I18nProvider, useI18n } from "./i18n/I18n";
import { OperatorConsole } from "./screens/console/OperatorConsole";
import { Lobby } from "./screens/Lobby";
import { FollowingStage, StageScreen } from "./screens/stage/StageScreen";

function SkipLink() {
  const { t } = useI18n();
  return (
    <a className="skip-link" href="#main">
      {t("app.skipToContent")}
    </a>
  );
}

export function App() {
  return (
    <I18nProvider>
      <SessionProvider>
        <BrowserRouter>
          <SkipLink />
          <ErrorBoundary>
            <Routes>
              <Route path="/" element={<RequireAudience audience="operator"><Lobby /></RequireAudience>} />
              <Route path="/operate/:caseId" element={<RequireAudience audience="operator"><OperatorConsole /></RequireAudience>} />
              <Route path="/stage/latest" element={<RequireAudience audience="stage"><FollowingStage /></RequireAudience>} />
              <Route path="/stage/:caseId" element={<RequireAudience audience="stage"><StageScreen /></RequireAudience>} />
              <Route path="*" element={<Navigate to="/" replace />} />
            </Routes>
          </ErrorBoundary>
        </BrowserRouter>
      </SessionProvider>
    </I18nProvider>
  );
}
