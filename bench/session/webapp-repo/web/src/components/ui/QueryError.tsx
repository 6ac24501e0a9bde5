import { useTranslation } from "react-i18next";
import { ApiError } from "../../api/client";
import { Button } from "./Button";

interface QueryErrorProps {
  error: unknown;
  onRetry?: () => void;
}

export function QueryError({ error, onRetry }: QueryErrorProps) {
  const { t } = useTranslation("common");
  const message = error instanceof ApiError ? t(error.body.message) : t("errors.generic");
  return (
    <div role="alert" className="flex items-center justify-between gap-3 rounded-card border border-subtle bg-danger-soft p-3 text-sm text-danger">
      <span>{message}</span>
      {onRetry && (
        <Button variant="secondary" size="sm" onClick={onRetry}>
          {t("actions.retry")}
        </Button>
      )}
    </div>
  );
}
