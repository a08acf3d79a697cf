import type { StateCreator } from 'zustand';
import type { DoctorReport } from '../../../shared/contract';

export interface DoctorSlice {
  doctor: { report: DoctorReport | null; loading: boolean; error: string | null };
  setDoctorLoading(): void;
  setDoctorReport(report: DoctorReport): void;
  setDoctorError(message: string): void;
}

export const createDoctorSlice: StateCreator<DoctorSlice, [], [], DoctorSlice> = (set) => ({
  doctor: { report: null, loading: false, error: null },
  setDoctorLoading: () => set((state) => ({ doctor: { ...state.doctor, loading: true, error: null } })),
  setDoctorReport: (report) => set({ doctor: { report, loading: false, error: null } }),
  setDoctorError: (message) => set((state) => ({ doctor: { ...state.doctor, loading: false, error: message } })),
});
