import { useI18n } from "../i18n/I18n";
import { UI_LANGUAGES } from "../i18n/strings";

/** Switches the interface language (not the case language). */
export function LanguageSwitch() {
  const { language, setLanguage, t } = useI18n();
  return (
    <div className="segmented" role="group" aria-label={t("ui.language")}>
      {UI_LANGUAGES.map((option) => (
        <button
          key={option}
          type="button"
          className="segmented__option"
          aria-pressed={language === option}
          lang={option === "zh" ? "zh-CN" : "en"}
          onClick={() => setLanguage(option)}
        >
          {t(option === "en" ? "lang.en" : "lang.zh")}
        </button>
      ))}
    </div>
  );
}
