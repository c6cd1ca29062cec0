import { ROLES, type Role } from "../../api/types";
import { LockIcon } from "../../components/LockIcon";
import { useI18n } from "../../i18n/I18n";

export function RoleTiles({ counts, activeRole }: { counts: Record<Role, number>; activeRole: Role | null }) {
  const { t } = useI18n();
  return (
    <ul className="stage-tiles" aria-label={t("rail.heading")}>
      {ROLES.map((role) => (
        <li key={role} className={`stage-tile stage-tile--${role}${role === activeRole ? " stage-tile--active" : ""}`} data-testid={`stage-tile-${role}`}>
          <span className="stage-tile__name">{t(`role.${role}`)}</span>
          <span className="stage-tile__count">
            <LockIcon /> 
            <span key={counts[role]} className="stage-tile__number">
              {t("stage.lockedCards", { n: counts[role] ?? 0 })}
            </span>
          </span>
        </li>
      ))}
    </ul>
  );
}
