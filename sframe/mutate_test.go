package sframe

import "testing"

func TestApply(t *testing.T) {
	tests := []struct {
		m       Mutation
		check   func(s *Section) bool
		wantErr bool
	}{
		{Mutation{0, 1, MutateCFA, 8}, func(s *Section) bool { return s.FDEs[0].FREs[1].Words[0] == 24 }, false},
		{Mutation{0, 1, MutateFP, -8}, func(s *Section) bool { return s.FDEs[0].FREs[1].Words[1] == -24 }, false},
		{Mutation{0, 1, MutateRA, 8}, nil, true}, // AMD64: fixed RA offset
		{Mutation{0, 2, MutateBase, 0}, func(s *Section) bool { return s.FDEs[0].FREs[2].BaseReg() == BaseSP }, false},
		{Mutation{0, 3, MutateStart, -1}, func(s *Section) bool { return s.FDEs[0].FREs[3].Start == 0x18 }, false},
		{Mutation{1, 0, MutateCFA, 8}, nil, true}, // outermost row
		{Mutation{0, 9, MutateCFA, 8}, nil, true},
		{Mutation{5, 0, MutateCFA, 8}, nil, true},
		{Mutation{0, 0, "size", 8}, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.m.String(), func(t *testing.T) {
			s := exampleSection(t)
			err := s.Apply(tt.m)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Apply: %v", err)
			}
			if err != nil {
				return
			}
			data, err := s.Encode()
			if err != nil {
				t.Fatal(err)
			}
			s2, err := Decode(data, s.Addr)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(s2) {
				t.Errorf("mutation not in the re-encoded section")
			}
			// Other rows keep their words.
			if s2.FDEs[0].FREs[0].Words[0] != 8 {
				t.Errorf("FRE 0 changed")
			}
		})
	}
}
