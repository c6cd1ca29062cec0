import { isDerivedCard, ROLES, type OperatorSnapshot, type Role } from "../../api/types";
import { LockIcon } from "../../components/LockIcon";
import { useI18n } from "../../i18n/I18n";

interface RoleRailProps {
  snapshot: OperatorSnapshot;
  selected: Role;
  onSelect: (role: Role) => void;
}

export function RoleRail({ snapshot, selected, onSelect }: RoleRailProps) {
  const { t } = useI18n();
  return (
    <nav className="role-rail" aria-labelledby="role-rail-heading">
      <h2 id="role-rail-heading" className="visually-hidden">
        {t("rail.heading")}
      </h2>
      <ul>
        {ROLES.map((role) => (
          <li key={role}>
            <button
              type="button"
              className={`role-button role-button--${role}`}
              aria-pressed={role === selected}
              onClick={() => onSelect(role)}
            >
              <span className="role-button__name">{t(`role.${role}`)}</span>
              <span className="role-button__count">
                <LockIcon /> 
                {t("rail.privateCount", { n: (snapshot.spaces[role] ?? []).filter((card) => !isDerivedCard(card)).length })}
              </span>
            </button>
          </li>
        ))}
      </ul>
    </nav>
  );
}
