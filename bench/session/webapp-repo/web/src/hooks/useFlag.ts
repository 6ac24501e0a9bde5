import { useFeatureIsOn } from "@growthbook/growthbook-react";
import type { FlagName } from "@tandem/shared/flags";

export function useFlag(name: FlagName): boolean {
  return useFeatureIsOn(name);
}
