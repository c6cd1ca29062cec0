import { ROLES, type KeyFact } from "../../api/types";
import type { FactCell, KnowledgeMatrix as Matrix } from "../../state/matrix";
import { useI18n } from "../../i18n/I18n";

const CELL_KEYS = {
  own_memory: "cell.own_memory",
  board: "cell.board",
  conflicting: "cell.conflicting",
  uncertain: "cell.uncertain",
  unknown: "cell.unknown",
  not_asked: "cell.not_asked",
} as const satisfies Record<FactCell, string>;

/** Roles × key facts, drawn with a column per role (three short names) and a row per fact (labels can wrap). */
export function KnowledgeMatrix({ keyFacts, matrix }: { keyFacts: KeyFact[]; matrix: Matrix }) {
  const { t, language } = useI18n();
  return (
    <section className="panel" aria-labelledby="matrix-heading">
      <h2 id="matrix-heading">{t("matrix.heading")}</h2>
      <table className="matrix">
        <caption className="muted">{t("matrix.caption")}</caption>
        <thead>
          <tr>
            <th scope="col">{t("matrix.fact")}</th>
            {ROLES.map((role) => (
              <th key={role} scope="col" className={`matrix__role matrix__role--${role}`}>
                {t(`role.${role}`)}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {keyFacts.map((fact) => (
            <tr key={fact.id}>
              <th scope="row">{fact.labels?.[language] ?? fact.label}</th>
              {ROLES.map((role) => {
                const cell = matrix[role][fact.id] ?? "not_asked";
                return (
                  <td key={role} className={`matrix__cell matrix__cell--${cell}`} data-testid={`matrix-${role}-${fact.id}`} data-cell={cell}>
                    {cell === "not_asked" ? (
                      <>
                        <span aria-hidden="true">{t(CELL_KEYS[cell])}</span>
                        <span className="visually-hidden">{t("cell.not_asked.label")}</span>
                      </>
                    ) : (
                      t(CELL_KEYS[cell])
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
