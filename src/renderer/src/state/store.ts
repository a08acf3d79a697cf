import { create } from 'zustand';
import { createDoctorSlice, type DoctorSlice } from './doctor-slice';

/** One store made of slices; services push whole snapshots and a slice replaces its part. */
export type AppState = DoctorSlice;

export const useAppStore = create<AppState>()((...args) => ({
  ...createDoctorSlice(...args),
}));
