import { useReducer } from "react";
import { useParams } from "react-router";
import { api, streamUrls } from "../../api/client";
import { ConnectionDot } from "../../components/ConnectionDot";
import { FixedLanguage, useI18n } from "../../i18n/I18n";
import type { ConnectionState } from "../../live/resumableStream";
import { useLiveSnapshot } from "../../live/useLiveSnapshot";
import { initialStageState, stageReducer, type StageState } from "../../state/stageState";
import { ConclusionLine } from "./ConclusionLine";
import { RetrievalSentence } from "./RetrievalSentence";
import { RoleTiles } from "./RoleTiles";
import { StageBoard } from "./StageBoard";

export function StageScreen() {
  const { caseId = "" } = useParams();
  return <CaseStage key={caseId} caseId={caseId} />;
}

function CaseStage({ caseId }: { caseId: string }) {
  const [state, dispatch] = useReducer(stageReducer, initialStageState);
  const { connection, missing } = useLiveSnapshot({
    load: () => api.stage(caseId),
    streamUrl: streamUrls.stage(caseId),
    ended: state.erased,
    onSnapshot: (snapshot) => dispatch({ type: "snapshot-loaded", snapshot }),
    onEvent: (event) => dispatch({ type: "live-event", event }),
  });

  const language = state.snapshot?.case.language;
  const view = <StageView caseId={caseId} state={state} missing={missing} connection={connection} />;
  return language === undefined ? view : <FixedLanguage language={language}>{view}</FixedLanguage>;
}

interface StageViewProps {
  caseId: string;
  state: StageState;
  missing: boolean;
  connection: ConnectionState;
}

function StageView({ caseId, state, missing, connection }: StageViewProps) {
  const { t } = useI18n();
  const { snapshot } = state;
  const ended = missing || state.erased;
  return (
    <div className="stage">
      <div key={state.activity} className={state.activity > 0 ? "stage__pulse stage__pulse--on" : "stage__pulse"} aria-hidden="true" />
      <header className="stage__header">
        <h1 className="stage__title">{t("app.title")}</h1>
        <span className="stage__case">{t("stage.caseLabel", { id: caseId })}</span>
        <ConnectionDot state={connection} />
      </header>
      <main id="main" className="stage__body">
        {ended && (
          <p className="stage__ended" role="alert">
            {missing ? t("stage.notFound", { id: caseId }) : t("stage.ended")}
          </p>
        )}
        {!ended && snapshot === null && <p className="stage__waiting">{t("common.loading")}</p>}
        {!ended && snapshot !== null && (
          <>
            <RoleTiles counts={snapshot.counts} activeRole={snapshot.last_retrieval?.role ?? null} />
            <RetrievalSentence retrieval={snapshot.last_retrieval} />
            <ConclusionLine conclusion={snapshot.last_conclusion ?? null} />
            <StageBoard cards={snapshot.bulletin_board} />
          </>
        )}
      </main>
    </div>
  );
}
